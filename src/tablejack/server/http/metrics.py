"""The floor's metrics for Prometheus: ``GET /metrics`` in the Prometheus text format, made by
prometheus-client from a registry of the app's own (not the library's global one: two apps in
one process, as the tests run them, never share a counter).

What is counted where it happens, cheaply:

* every transaction of the store's play path (:attr:`tablejack.store.Store.committed`): its
  time (``tablejack_commit_seconds``), and for each step of a round the step
  (``tablejack_steps_total``), its wagers and their cents (``tablejack_wagers_total``,
  ``tablejack_wagered_cents_total``) and the round's end (``tablejack_rounds_total``) — labelled
  by game and wager kind only, never by table, player or round;
* a terminal's wager or decision from the moment its frame is read to its step committed and
  answered, the update that follows it on its way (``tablejack_decision_seconds``).

What is a state is read when Prometheus scrapes (:class:`FloorCollector`): the sockets by
role, the tables by status, the tilts open, the leases held, the tables taken over from
another process, the writes refused for a fencing token, the tables dropped by reason, the
event loop's lag and the age of the last lease renewal (a floor of several processes: the
renewal runs on a thread of its own, :mod:`tablejack.server.floor.renewal`), the age
of the newest signed checkpoint, whether the process is draining, and the SAS links' state
that a link reports through :meth:`Metrics.link_state`.

prometheus-client's own collectors add the process's resident memory, CPU and open files
(``process_*``) and the garbage collector's collections by generation (``python_gc_*``: the
oldest generation is collected every minute by ``serve``, :mod:`tablejack.server.support.heap`,
whose collections, their time, the longest and what they freed are ``tablejack_gc_full_*``).

Access (docs/server.md, "Operations"): a staff credential whose role may read the floor's
reports (supervisor, operator), or a request from an address ``serve --metrics-from`` names
(a Prometheus on the host or the monitoring network) without one.
"""

from __future__ import annotations

import ipaddress
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response
from prometheus_client import CollectorRegistry, GCCollector, Histogram, ProcessCollector
from prometheus_client import Counter as PromCounter
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import Collector

from tablejack.server.floor.floor import Floor
from tablejack.server.http.access import identity
from tablejack.server.support.heap import OldestCollection
from tablejack.store import Step
from tablejack.store.policy import Role

__all__ = ["METRICS_ROLES", "FloorCollector", "Metrics", "Network", "router"]

METRICS_ROLES = frozenset({Role.SUPERVISOR.value, Role.OPERATOR.value})
"""The staff roles whose credential may read ``/metrics``."""

LATENCY_BUCKETS = (0.002, 0.005, 0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5)
"""Seconds: the decision-to-update target is 100 ms at the 99th percentile."""
COMMIT_BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class Metrics:
    """The metrics of one app (one floor process): the registry and its hooks."""

    def __init__(self, open_to: Iterable[Network] = ()) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.open_to = tuple(open_to)
        """Addresses that may scrape without a credential (``serve --metrics-from``)."""
        self.floor: Floor | None = None
        self.leases: Any = None
        """The process's :class:`~tablejack.server.floor.leasing.FloorLeases` (a floor of several
        processes), or None."""
        self.checkpointer: Any = None
        self.draining = False
        self.links: dict[str, bool] = {}
        """The SAS links' state by link name (:meth:`link_state`)."""
        self.heap: OldestCollection | None = None
        """``serve``'s collection of the oldest generation on a clock, or None."""
        registry = self.registry
        self.rounds = PromCounter(
            "tablejack_rounds",
            "Rounds ended, by game and how they ended (complete, voided).",
            ["game", "status"],
            registry=registry,
        )
        self.steps = PromCounter(
            "tablejack_steps",
            "Steps of rounds committed (a wager, a decision round, a card, the settlement).",
            ["game"],
            registry=registry,
        )
        self.wagers = PromCounter(
            "tablejack_wagers",
            "Wagers committed, by game and wager kind.",
            ["game", "kind"],
            registry=registry,
        )
        self.wagered = PromCounter(
            "tablejack_wagered_cents",
            "Cents wagered (the wagers' amounts as placed), by game and wager kind.",
            ["game", "kind"],
            registry=registry,
        )
        self.decision = Histogram(
            "tablejack_decision_seconds",
            "From a terminal's wager or decision read to its step committed and answered, "
            "the update to every terminal of the table sent with it.",
            ["type"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.commit = Histogram(
            "tablejack_commit_seconds",
            "The store's play-path transactions (a group commit of steps), from begin to commit.",
            buckets=COMMIT_BUCKETS,
            registry=registry,
        )
        self.committed_steps = PromCounter(
            "tablejack_committed_steps",
            "Steps written by the play path's transactions (every log, the rounds' and the "
            "floor's own).",
            registry=registry,
        )
        self.sign_ins = PromCounter(
            "tablejack_sign_ins",
            "WebSockets signed in (a hello accepted); beside tablejack_sockets, the rate of "
            "reconnections.",
            registry=registry,
        )
        self.socket_ends = PromCounter(
            "tablejack_socket_ends",
            "Signed-in WebSockets that ended, by why: peer (the terminal closed it or the "
            "connection was cut), too slow, credential ended, drained, table moved, rate limit, "
            "malformed, frame too big.",
            ["reason"],
            registry=registry,
        )
        registry.register(FloorCollector(self))
        GCCollector(registry=registry)  # python_gc_*: the collections by generation
        ProcessCollector(registry=registry)  # process_*: RSS, CPU, open files of the process
        self._games: dict[str, str] = {}

    # -- hooks --------------------------------------------------------------------------------

    def attach(self, floor: Floor, leases: Any = None, checkpointer: Any = None) -> None:
        """Count the floor's commits and read its state at each scrape."""
        self.floor, self.leases, self.checkpointer = floor, leases, checkpointer
        floor.store.committed = self.committed

    def committed(self, steps: Sequence[Step], seconds: float) -> None:
        """A play-path transaction committed ``steps`` in ``seconds`` (the store's hook)."""
        self.commit.observe(seconds)
        self.committed_steps.inc(len(steps))
        for step in steps:
            table_id, _, number = step.round_id.rpartition("-")
            if not number.isdigit():
                continue  # a table's procedure log, the floor's own logs
            game = self._game(table_id, step)
            self.steps.labels(game).inc()
            for event in step.events:
                if event.kind == "wager":
                    kind = str(event.payload.get("kind", ""))
                    self.wagers.labels(game, kind).inc()
                    self.wagered.labels(game, kind).inc(int(event.payload.get("amount", 0)))
            if step.status in ("complete", "voided"):
                self.rounds.labels(game, step.status).inc()

    def _game(self, table_id: str, step: Step) -> str:
        game = self._games.get(table_id)
        if game is None:
            if step.open_round is not None:
                game = step.open_round[2]
            else:
                table = None if self.floor is None else self.floor.tables.get(table_id)
                if table is None:
                    return "unknown"
                game = table.game
            self._games[table_id] = game
        return game

    def signed_in(self) -> None:
        """A WebSocket signed in."""
        self.sign_ins.inc()

    def socket_ended(self, reason: str) -> None:
        """A signed-in WebSocket ended, for ``reason`` (:meth:`Connection.ended_because`)."""
        self.socket_ends.labels(reason).inc()

    def answered(self, kind: str, seconds: float) -> None:
        """A terminal's ``wager`` or ``action`` took ``seconds`` from read to answered."""
        self.decision.labels(kind).observe(seconds)

    def link_state(self, link: str, up: bool) -> None:
        """A SAS link (``serve --sas``) reports whether it is up; shown as
        ``tablejack_sas_link_up{link=…}`` from then on."""
        self.links[link] = up

    def allowed_without_credential(self, host: str | None) -> bool:
        """Is ``host`` (the peer's address) one ``--metrics-from`` names?"""
        if host is None or not self.open_to:
            return False
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in self.open_to)

    def exposition(self) -> bytes:
        """The registry in the Prometheus text format."""
        return generate_latest(self.registry)


class FloorCollector(Collector):
    """The floor's state, read at each scrape (nothing counted on the hot path)."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        metrics = self.metrics
        floor = metrics.floor
        sockets = GaugeMetricFamily(
            "tablejack_sockets", "WebSockets signed in to this process, by role.", labels=["role"]
        )
        tables = GaugeMetricFamily(
            "tablejack_tables", "Tables this process runs, by status.", labels=["status"]
        )
        tilts = GaugeMetricFamily(
            "tablejack_tilts_open", "Tilts open at this process's tables (PA 605a lock-out)."
        )
        if floor is not None:
            roles = Counter(connection.role for connection in list(floor.connections))
            for role in ("player", "dealer", "supervisor", "operator", "cashier"):
                sockets.add_metric([role], roles.get(role, 0))
            statuses = Counter(table.status for table in list(floor.tables.values()))
            for status, count in sorted(statuses.items()):
                tables.add_metric([status], count)
            tilts.add_metric([], sum(len(table.tilts) for table in list(floor.tables.values())))
        yield sockets
        yield tables
        yield tilts
        leases = metrics.leases
        held = GaugeMetricFamily("tablejack_leases_held", "Table leases this process holds.")
        takeovers = CounterMetricFamily(
            "tablejack_lease_takeovers",
            "Tables this process took over from another process of the floor.",
        )
        refusals = CounterMetricFamily(
            "tablejack_fencing_refusals",
            "Writes of this process the store refused for a stale fencing token.",
        )
        dropped = CounterMetricFamily(
            "tablejack_tables_dropped",
            "Tables this process stopped serving, by reason (taken, fenced, cut off, released).",
            labels=["reason"],
        )
        lag = GaugeMetricFamily(
            "tablejack_loop_lag_seconds",
            "How late the event loop ran its last watchdog tick (a floor of several processes; "
            "no sample otherwise).",
        )
        over_lease = CounterMetricFamily(
            "tablejack_loop_lags_over_lease",
            "Watchdog ticks the event loop ran later than a lease time: the process is "
            "saturated (its leases renewed on their own thread meanwhile).",
        )
        renewal_age = GaugeMetricFamily(
            "tablejack_lease_renewal_age_seconds",
            "Seconds since the last lease renewal that succeeded was sent (no sample: no leases).",
        )
        withheld = CounterMetricFamily(
            "tablejack_lease_renewals_withheld",
            "Lease renewals not sent because the event loop had not turned for --loop-stall.",
        )
        renewal_took = GaugeMetricFamily(
            "tablejack_lease_renewal_seconds",
            "How long the last lease renewal that succeeded took (no sample: no leases).",
        )
        slow = CounterMetricFamily(
            "tablejack_lease_renewals_slow",
            "Lease renewals that succeeded but took longer than a third of the lease.",
        )
        if leases is not None:
            held.add_metric([], len(leases.fences))
            takeovers.add_metric([], leases.takeovers)
            refusals.add_metric([], leases.refusals)
            for reason in ("taken", "fenced", "cut off", "released"):
                dropped.add_metric([reason], leases.dropped.get(reason, 0))
            lag.add_metric([], leases.watch.lag)
            over_lease.add_metric([], leases.watch.lags_over_lease)
            renewal_age.add_metric([], max(0.0, time.monotonic() - leases.renewed_at))
            renewal = leases.renewal
            withheld.add_metric([], 0 if renewal is None else renewal.withheld)
            slow.add_metric([], 0 if renewal is None else renewal.slow)
            if renewal is not None:
                renewal_took.add_metric([], renewal.took)
        else:
            held.add_metric([], 0)
            takeovers.add_metric([], 0)
            refusals.add_metric([], 0)
            over_lease.add_metric([], 0)
            withheld.add_metric([], 0)
            slow.add_metric([], 0)
        yield held
        yield takeovers
        yield refusals
        yield dropped
        yield lag
        yield over_lease
        yield renewal_age
        yield withheld
        yield renewal_took
        yield slow
        checkpointer = metrics.checkpointer
        checked = None if checkpointer is None else checkpointer.checked_at
        age = GaugeMetricFamily(
            "tablejack_checkpoint_age_seconds",
            "Seconds since the event log was last covered by a signed checkpoint (no sample: "
            "no checkpoint signer, --unsigned).",
        )
        if checked is not None:
            age.add_metric([], max(0.0, time.time() - checked))
        yield age
        yield GaugeMetricFamily(
            "tablejack_draining", "1 while the process drains (SIGTERM).", value=metrics.draining
        )
        links = GaugeMetricFamily(
            "tablejack_sas_link_up", "A SAS link's state (1: up).", labels=["link"]
        )
        for link, up in sorted(metrics.links.items()):
            links.add_metric([link], 1 if up else 0)
        yield links
        yield from _full_collections(metrics.heap)


def _full_collections(heap: OldestCollection | None) -> Iterator[Metric]:
    """The oldest generation's collections on ``serve``'s clock (no sample without one): how many,
    the seconds they took (the event loop waits for each), the longest, what they freed."""
    runs = CounterMetricFamily(
        "tablejack_gc_full_collections", "Collections of the oldest generation on serve's clock."
    )
    took = CounterMetricFamily(
        "tablejack_gc_full_collection_seconds",
        "Seconds those collections took in all: the event loop waited for them.",
    )
    longest = GaugeMetricFamily(
        "tablejack_gc_full_collection_longest_seconds",
        "The longest of those collections: the event loop's longest wait for one.",
    )
    freed = CounterMetricFamily(
        "tablejack_gc_full_collection_freed_objects",
        "Unreachable objects those collections found (garbage in reference cycles).",
    )
    if heap is not None:
        runs.add_metric([], heap.collections)
        took.add_metric([], heap.took)
        longest.add_metric([], heap.longest)
        freed.add_metric([], heap.freed)
    yield runs
    yield took
    yield longest
    yield freed


router = APIRouter()


@router.get(
    "/metrics",
    response_class=Response,
    responses={
        200: {
            "description": "The floor's metrics in the Prometheus text format.",
            "content": {"text/plain": {}},
        },
        401: {"description": "No credential, from an address not allowed without one."},
        403: {"description": "A credential of a role that may not read the metrics."},
    },
    tags=["operations"],
)
async def metrics(request: Request) -> Response:
    """Prometheus metrics (docs/server.md, "Operations"): a supervisor's or an operator's
    credential, or a request from an address ``serve --metrics-from`` names."""
    state: Metrics = request.app.state.metrics
    client = request.client.host if request.client is not None else None
    if not state.allowed_without_credential(client):
        who = await identity(request)
        if who.role not in METRICS_ROLES:
            raise HTTPException(
                403,
                {
                    "code": "role",
                    "rule": "role: supervisor/operator",
                    "message": "The metrics are read with a supervisor's or an operator's "
                    "credential.",
                },
            )
    return Response(state.exposition(), media_type=CONTENT_TYPE_LATEST)
