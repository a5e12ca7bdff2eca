"""tablejack: software for regulated blackjack table games.

The layers (``docs/architecture.md``): :mod:`tablejack.core` (cards, shoe, hands, money, rules, records),
:mod:`tablejack.games` (one round state machine per game), :mod:`tablejack.lab` (exact analysis,
strategy, simulation, par sheets), :mod:`tablejack.store` (the SQL store: the money-movement
policy, the ledger, the hash-chained log and its signed checkpoints), :mod:`tablejack.server`
(the table server) and :mod:`tablejack.cli`.
"""
