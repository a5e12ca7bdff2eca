"""The parts of a floor's leases that need no database: member ids, and which members a process
may take over without waiting for their leases to expire."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from tablejack.server.floor.leasing import ended, member_id


def test_a_member_id_is_the_name_the_process_id_and_a_random_part() -> None:
    name, pid, tail = member_id("floor-2").split(":")
    assert (name, pid, len(tail)) == ("floor-2", str(os.getpid()), 8)
    assert member_id().startswith(f"{socket.gethostname()[:64]}:{os.getpid()}:")
    assert member_id() != member_id()


def test_only_a_process_of_this_host_that_has_ended_is_taken_over_at_once() -> None:
    host = socket.gethostname()[:64]
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    gone = int(child.stdout)
    assert ended(f"{host}:{gone}:0badc0de")  # its process id no longer runs
    assert not ended(f"{host}:{os.getpid()}:0badc0de")  # this very process
    assert not ended(f"{host}:1:0badc0de")  # alive (init), whoever owns it
    assert not ended(f"another-host:{gone}:0badc0de")  # another host's: its leases expire
    assert not ended("not-a-member-id")
