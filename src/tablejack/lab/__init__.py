"""The math lab: exact analysis, generated basic strategy, fast simulation and par sheets.

The lab reads a game's rules (:class:`~tablejack.lab.model.AnalysisRules`), computes the
mathematics exactly where it can (:mod:`tablejack.lab.exact`), simulates with numba kernels fed
by seeded shoes (:mod:`tablejack.lab.simulate`) and writes par sheets
(:mod:`tablejack.lab.parsheet`). Each game plugs in through :mod:`tablejack.lab.games`. The
package imports numpy and numba only when a module that needs them is imported, so the CLI's
help stays fast.
"""

from __future__ import annotations

from typing import Any

__all__ = ["AnalysisRules"]


def __getattr__(name: str) -> Any:
    if name == "AnalysisRules":
        from tablejack.lab.model import AnalysisRules

        return AnalysisRules
    raise AttributeError(f"module 'tablejack.lab' has no attribute {name!r}")
