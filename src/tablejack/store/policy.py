"""The money-movement policy: every kind of ledger movement, who may start it, the account kinds
on each side, each account kind's invariant, and what each role may do besides moving money.

This module is the one table of who may move which money. Every posting the store writes passes
:func:`check_posting` inside the write path (:meth:`tablejack.store.Store.commit`), and the
balance update of each account names the account kind the policy expects, so the database itself
refuses a movement whose accounts are of the wrong kind. The migration ``0003_trust`` copies
:data:`MOVEMENTS` into the ``movement_kinds`` table, and a trigger on ``ledger_entries`` refuses
any row whose kind and account kinds are not in it; CHECK constraints hold the invariants a
single row can hold (a player account never below zero …). ``verify-log`` checks the rest
(:mod:`tablejack.store.verify`).

>>> from tablejack.store.db import Transfer
>>> check_posting(Transfer("ann", "escrow:A1", 1000, "wager"), Actor(Role.TABLE, "A1"), "ann")
(<AccountKind.PLAYER: 'player'>, <AccountKind.ESCROW: 'escrow'>)
>>> check_posting(Transfer("vouchers", "ann", 1000, "jackpot"), Actor(Role.DEALER, "dana"))
Traceback (most recent call last):
...
tablejack.store.policy.PolicyError: A jackpot hand pay (player → cage) may be started by a supervisor or cashier, not by a dealer (PA 605a.4(d)).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

__all__ = [
    "INVARIANTS",
    "MOVEMENTS",
    "PERMISSIONS",
    "POLICY_RULE",
    "RESERVED_ACCOUNTS",
    "AccountKind",
    "Actor",
    "Invariant",
    "MovementRule",
    "PolicyError",
    "Posting",
    "Role",
    "account_kind_of",
    "allowed",
    "check_account_id",
    "check_posting",
    "roles_for",
]

POLICY_RULE = "money-movement policy"
"""The rule a refusal by the policy names besides the movement's own clause."""


class PolicyError(ValueError):
    """A posting or an operation the policy forbids: nothing was written. ``rule`` names the
    clause (or the policy)."""

    def __init__(self, message: str, rule: str = POLICY_RULE, code: str = "policy") -> None:
        super().__init__(message)
        self.message = message
        self.rule = rule
        self.code = code


class AccountKind(StrEnum):
    """The kinds of account of the ledger."""

    PLAYER = "player"
    """A player's game account (PA 605a.2(d))."""
    CAGE = "cage"
    """The cage: funds credit sold for cash, pays hand pays and vouchers cashed."""
    BILLS = "bills"
    """The cash in the terminals' bill validators (minus the bills accepted)."""
    VOUCHERS = "voucher"
    """The vouchers outstanding (account id ``vouchers``)."""
    ESCROW = "escrow"
    """A table's unsettled wagers (``escrow:<table>``)."""
    HOUSE = "house"
    """A table's win (``house:<table>``)."""
    TIPS = "tips"
    """A table's toke box (``tips:<table>``)."""
    SYSTEM = "system"
    """The floor's account with a casino management system (``system:<system>``, e.g.
    ``system:sas.01``): the tickets of that system the floor paid (floor-wide TITO) less the
    floor's own tickets the system paid elsewhere."""


class Role(StrEnum):
    """Who acts: people with a credential, a terminal device, or a table's own runtime."""

    PLAYER = "player"
    """A player, signed in at an electronic wagering terminal."""
    DEALER = "dealer"
    """The table's dealer (attendant): deals, runs the console, locks a terminal."""
    SUPERVISOR = "supervisor"
    """The floor supervisor: voids rounds, clears tilts and meters, pays large hand pays."""
    CASHIER = "cashier"
    """The cage: sells credit, pays hand pays up to the limit and vouchers cashed."""
    OPERATOR = "operator"
    """The system operator: terminals and their credentials, staff tokens, floor settings."""
    TERMINAL = "terminal"
    """An electronic wagering terminal's device credential (proves the device, moves no money
    by itself: a player signs in at it). Its link to a casino system relays that system's word
    on a ticket as the terminal (``host_redeemed``)."""
    TABLE = "table"
    """A table's runtime: books the wagers its players place and the settlements and refunds
    the engine decides (subject: the table id)."""


PEOPLE = (Role.PLAYER, Role.DEALER, Role.SUPERVISOR, Role.CASHIER, Role.OPERATOR)
"""The roles a person's token carries (a terminal credential is a device's)."""

FIXED_ACCOUNTS: dict[str, AccountKind] = {
    "cage": AccountKind.CAGE,
    "bills": AccountKind.BILLS,
    "vouchers": AccountKind.VOUCHERS,
}
RESERVED_ACCOUNTS = frozenset(FIXED_ACCOUNTS)
TABLE_ACCOUNTS = {
    "escrow": AccountKind.ESCROW,
    "house": AccountKind.HOUSE,
    "tips": AccountKind.TIPS,
}
SYSTEM_PREFIX = "system"
_SYSTEM_ID = re.compile(r"[A-Za-z0-9_.-]{1,32}")
_PLAYER_ID = re.compile(r"[A-Za-z0-9_.@-]{1,64}")
_TABLE_ID = re.compile(r"[A-Za-z0-9_.-]{1,56}")


def account_kind_of(account: str) -> AccountKind | None:
    """The kind an account id names by its shape (None: no valid account id).

    >>> [account_kind_of(a) for a in ("ann", "escrow:A1", "vouchers", "escrow:", "a b")]
    [<AccountKind.PLAYER: 'player'>, <AccountKind.ESCROW: 'escrow'>, <AccountKind.VOUCHERS: 'voucher'>, None, None]
    """
    if account in FIXED_ACCOUNTS:
        return FIXED_ACCOUNTS[account]
    prefix, colon, rest = account.partition(":")
    if colon and prefix == SYSTEM_PREFIX:
        return AccountKind.SYSTEM if _SYSTEM_ID.fullmatch(rest) else None
    if colon:
        kind = TABLE_ACCOUNTS.get(prefix)
        return kind if kind is not None and _TABLE_ID.fullmatch(rest) else None
    return AccountKind.PLAYER if _PLAYER_ID.fullmatch(account) else None


def check_account_id(account: str, kind: str) -> AccountKind:
    """Refuse an account id whose shape names another kind than ``kind`` (a player may not be
    called ``escrow:A1`` or ``vouchers``)."""
    named = account_kind_of(account)
    if named is None or named.value != kind:
        raise PolicyError(
            f"Account id {account[:70]!r} is not a valid {kind} account id (players: 1-64 "
            "letters, digits and _.@-; tables' accounts: escrow:, house:, tips: and the table "
            "id; a casino system's: system: and its name; cage, bills, vouchers).",
            code="account",
        )
    return named


@dataclass(frozen=True, slots=True)
class Actor:
    """Who starts a movement: a role and its subject (account, employee, terminal or table
    id), the authenticated terminal it acts from (players), and the table it acts at."""

    role: Role
    subject: str
    terminal: str = ""
    table: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "role", Role(self.role))

    def describe(self) -> str:
        """``'dealer dana'``, ``'player ann at EWT-1'``."""
        where = f" at {self.terminal}" if self.terminal else ""
        return f"{self.role.value} {self.subject}{where}"


class Posting(Protocol):
    """What the policy needs of a posting (:class:`tablejack.store.Transfer` is one)."""

    @property
    def from_account(self) -> str: ...
    @property
    def to_account(self) -> str: ...
    @property
    def amount(self) -> int: ...
    @property
    def kind(self) -> str: ...


@dataclass(frozen=True, slots=True)
class MovementRule:
    """One kind of ledger movement."""

    kind: str
    what: str
    source: AccountKind
    target: AccountKind
    roles: frozenset[Role]
    rule: str
    own: bool = False
    """A player moves only his own account: the player side is the actor (a table: the player
    whose request the posting answers)."""
    at_terminal: bool = False
    """A player starts it only from an authenticated terminal."""
    limit: str = ""
    """A floor setting that caps the amount for every role but a supervisor (enforced by the
    floor function, which reads the settings)."""

    def sides(self) -> str:
        """``'player → escrow'``."""
        return f"{self.source.value} → {self.target.value}"


def _rule(
    kind: str,
    what: str,
    source: AccountKind,
    target: AccountKind,
    roles: tuple[Role, ...],
    rule: str,
    **options: object,
) -> tuple[str, MovementRule]:
    return kind, MovementRule(kind, what, source, target, frozenset(roles), rule, **options)  # type: ignore[arg-type]


P, C, B, V, E, H, T, S = (
    AccountKind.PLAYER,
    AccountKind.CAGE,
    AccountKind.BILLS,
    AccountKind.VOUCHERS,
    AccountKind.ESCROW,
    AccountKind.HOUSE,
    AccountKind.TIPS,
    AccountKind.SYSTEM,
)
MOVEMENTS: dict[str, MovementRule] = dict(
    [
        _rule("fund", "credit sold at the cage", C, P, (Role.CASHIER,), "PA 605a.2(d)"),
        _rule(
            "bill_in",
            "a bill accepted by the terminal's validator",
            B,
            P,
            (Role.PLAYER,),
            "PA 605a.5(c)",
            own=True,
            at_terminal=True,
        ),
        _rule(
            "voucher_out",
            "a voucher issued at cash-out",
            P,
            V,
            (Role.PLAYER,),
            "PA 605a.5(c)",
            own=True,
            at_terminal=True,
        ),
        _rule(
            "voucher_in",
            "a voucher redeemed at a terminal",
            V,
            P,
            (Role.PLAYER,),
            "PA 605a.5(c)",
            own=True,
            at_terminal=True,
        ),
        _rule(
            "host_voucher_in",
            "a casino system's ticket redeemed at a terminal, the system approving it",
            S,
            P,
            (Role.PLAYER,),
            "PA 605a.5(c)",
            own=True,
            at_terminal=True,
        ),
        _rule(
            "host_redeemed",
            "a voucher the casino system validated and reports redeemed elsewhere",
            V,
            S,
            (Role.TERMINAL,),
            "PA 605a.5(c)",
        ),
        _rule(
            "voucher_sold",
            "a voucher sold for cash at the cage",
            C,
            V,
            (Role.CASHIER,),
            "PA 605a.5(c)",
            limit="voucher_limit",
        ),
        _rule(
            "voucher_paid",
            "a voucher cashed at the cage",
            V,
            C,
            (Role.CASHIER,),
            "PA 605a.5(c)",
        ),
        _rule(
            "voucher_voided",
            "a voucher the cage sold, voided before it is used",
            V,
            C,
            (Role.CASHIER,),
            "PA 605a.5(c)",
        ),
        _rule(
            "jackpot",
            "a jackpot hand pay",
            P,
            C,
            (Role.CASHIER, Role.SUPERVISOR),
            "PA 605a.4(d)",
            limit="handpay_limit",
        ),
        _rule(
            "cancelled_credit",
            "a cancelled-credit hand pay",
            P,
            C,
            (Role.CASHIER, Role.SUPERVISOR),
            "PA 605a.4(d)",
            limit="handpay_limit",
        ),
        _rule(
            "wager", "a wager to the table's escrow", P, E, (Role.TABLE,), "PA 633c.5(k)", own=True
        ),
        _rule("returned", "the part of a wager returned", E, P, (Role.TABLE,), "PA 605a.2(d)"),
        _rule("lost", "the part of a wager lost", E, H, (Role.TABLE,), "PA 605a.2(d)"),
        _rule("winnings", "the winnings of a wager", H, P, (Role.TABLE,), "PA 605a.2(d)"),
        _rule("refund", "a voided round's wager refunded", E, P, (Role.TABLE,), "PA 633a.14"),
        _rule(
            "tip",
            "a tip to the dealer's toke box",
            P,
            T,
            (Role.PLAYER,),
            "PA 605a.5(d)",
            own=True,
            at_terminal=True,
        ),
    ]
)
"""Every ledger movement kind. A table's escrow, house and tip accounts are always those of the
table the actor acts at."""


@dataclass(frozen=True, slots=True)
class Invariant:
    """What an account kind's balance always is; ``check`` is the SQL CHECK the database holds
    (empty: none), the rest ``verify-log`` checks."""

    kind: AccountKind
    statement: str
    check: str = ""
    verified: str = ""


INVARIANTS: dict[AccountKind, Invariant] = {
    P: Invariant(P, "never below zero", "balance >= 0", "equals its ledger rows"),
    C: Invariant(C, "any sign: minus the credit sold plus what the cage paid", "", "ledger"),
    B: Invariant(B, "never above zero: minus the bills accepted", "balance <= 0", "ledger"),
    V: Invariant(
        V,
        "equals the vouchers outstanding (issued, not redeemed)",
        "balance >= 0",
        "the sum of the issued vouchers",
    ),
    E: Invariant(
        E,
        "equals the table's open wagers",
        "balance >= 0",
        "wagers less settlements and refunds of the table's unfinished rounds",
    ),
    H: Invariant(H, "the table's win: any sign", "", "ledger"),
    T: Invariant(T, "the tips given at the table, never below zero", "balance >= 0", "ledger"),
    S: Invariant(
        S,
        "any sign: the floor's tickets the system paid less the system's tickets the floor paid",
        "",
        "ledger",
    ),
}
"""Besides these, every balance equals the sum of its ledger rows, and all balances sum to 0."""


PERMISSIONS: dict[str, frozenset[Role]] = {
    name: frozenset(roles)
    for name, roles in {
        # rounds and tables
        "wager": (Role.PLAYER,),
        "dealer_command": (Role.DEALER,),
        "reader": (Role.DEALER,),
        "void_round": (Role.SUPERVISOR,),
        "allow_manual_entry": (Role.SUPERVISOR,),
        "correct_card": (Role.SUPERVISOR,),
        "open_close_table": (Role.SUPERVISOR,),
        "reader_inspection": (Role.SUPERVISOR,),
        "register_decks": (Role.SUPERVISOR, Role.DEALER),
        "deck_inspection": (Role.SUPERVISOR,),
        "read_procedures": (Role.SUPERVISOR, Role.DEALER),
        # money (each also bound by MOVEMENTS)
        "sell_credit": (Role.CASHIER,),
        "bill_in": (Role.PLAYER,),
        "cash_out": (Role.PLAYER,),
        "voucher_in": (Role.PLAYER,),
        "voucher_paid": (Role.CASHIER,),
        "sell_voucher": (Role.CASHIER,),
        "void_voucher": (Role.CASHIER,),
        "hand_pay": (Role.CASHIER, Role.SUPERVISOR),
        "tip": (Role.PLAYER,),
        "read_voucher": (Role.CASHIER, Role.SUPERVISOR),
        "read_account": (Role.CASHIER, Role.SUPERVISOR),
        # dual control and drawers at the cage (store/approvals.py, store/drawers.py)
        "read_approvals": (Role.CASHIER, Role.SUPERVISOR),
        # a shift's transactions and their receipts (a cashier his own: the information policy)
        "read_cage_transactions": (Role.CASHIER, Role.SUPERVISOR),
        "decide_approval": (Role.SUPERVISOR,),
        "cage_drawer": (Role.CASHIER,),
        # a player's protections (PA Chapter 605a): the player himself (his own account only),
        # a supervisor, and the cashier — the terminal sends a player "to the cage" to set his
        # limits or exclude himself, so the cage's desk takes the request; a loosening still
        # waits 24 hours whoever asks (store/protections.py)
        "read_player_limits": (Role.PLAYER, Role.SUPERVISOR, Role.CASHIER),
        "set_player_limits": (Role.PLAYER, Role.SUPERVISOR, Role.CASHIER),
        # floor duties
        "lock_terminal": (Role.DEALER, Role.SUPERVISOR),
        "clear_tilt": (Role.SUPERVISOR,),
        "read_tilts": (Role.DEALER, Role.SUPERVISOR),
        "meter_clear": (Role.SUPERVISOR,),
        "read_meters": (Role.SUPERVISOR,),
        "read_reports": (Role.SUPERVISOR,),
        "read_rounds": (Role.SUPERVISOR,),
        "recall_round": (Role.SUPERVISOR, Role.PLAYER),
        "read_audit": (Role.SUPERVISOR,),
        "verify_log": (Role.SUPERVISOR, Role.OPERATOR),
        "read_integrity": (Role.SUPERVISOR, Role.OPERATOR),
        "read_settings": (Role.DEALER, Role.SUPERVISOR, Role.OPERATOR),
        "change_settings": (Role.OPERATOR,),
        "read_setting_history": (Role.SUPERVISOR, Role.OPERATOR),
        "register_terminal": (Role.OPERATOR,),
        "read_terminals": (Role.SUPERVISOR, Role.OPERATOR),
        "issue_token": (Role.OPERATOR,),
        "revoke_token": (Role.SUPERVISOR, Role.OPERATOR),
        "read_tokens": (Role.SUPERVISOR, Role.OPERATOR),
    }.items()
}
"""What each role may do besides the movements: the API checks every request against it."""


def roles_for(operation: str) -> frozenset[Role]:
    """The roles that may do ``operation`` (a key of :data:`PERMISSIONS`)."""
    return PERMISSIONS[operation]


def allowed(role: str, operation: str) -> bool:
    """True when ``role`` may do ``operation``."""
    return role in {r.value for r in PERMISSIONS[operation]}


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _names(roles: frozenset[Role]) -> str:
    ordered = [r.value for r in Role if r in roles]
    return ordered[0] if len(ordered) == 1 else ", ".join(ordered[:-1]) + " or " + ordered[-1]


def check_posting(
    posting: Posting, actor: Actor | None, requested_by: str = ""
) -> tuple[AccountKind, AccountKind]:
    """The account kinds a posting moves money between, or :class:`PolicyError` naming the
    rule it breaks: a movement kind the policy has not, a role that may not start it, an
    account whose id is not of the kind the movement needs, a player account that is not the
    actor's own (``requested_by``: for a table, the player whose request the posting answers),
    a table account of another table, a player not at an authenticated terminal."""
    rule = MOVEMENTS.get(posting.kind)
    if rule is None:
        raise PolicyError(
            f"{posting.kind!r} is not a movement kind of the money-movement policy "
            f"({', '.join(MOVEMENTS)}).",
        )
    clause = rule.rule
    if actor is None:
        raise PolicyError(f"{_cap(rule.what)} needs an actor who starts it ({clause}).", clause)
    if actor.role not in rule.roles:
        raise PolicyError(
            f"{_cap(rule.what)} ({rule.sides()}) may be started by a {_names(rule.roles)}, not "
            f"by a {actor.role.value} ({clause}).",
            clause,
            "role",
        )
    for side, account, wanted in (
        ("from", posting.from_account, rule.source),
        ("to", posting.to_account, rule.target),
    ):
        named = account_kind_of(account)
        if named is not wanted:
            raise PolicyError(
                f"{_cap(rule.what)} moves money {rule.sides()}; {account[:70]!r} is not a "
                f"{wanted.value} account ({side} side; {clause}).",
                clause,
                "account",
            )
        if wanted in TABLE_ACCOUNTS.values():
            table = account.partition(":")[2]
            home = actor.subject if actor.role is Role.TABLE else actor.table
            if table != home:
                raise PolicyError(
                    f"{account!r} belongs to table {table}; {actor.describe()} acts at "
                    f"{home or 'no table'} ({clause}).",
                    clause,
                    "account",
                )
    if posting.from_account == posting.to_account:
        raise PolicyError(f"A movement from {posting.from_account!r} to itself.", clause)
    if rule.own:
        player = posting.from_account if rule.source is AccountKind.PLAYER else posting.to_account
        owner = requested_by if actor.role is Role.TABLE else actor.subject
        if player != owner:
            raise PolicyError(
                f"{_cap(rule.what)} moves only the requester's own account: {player!r} is not "
                f"{owner or 'the requester'!r} ({clause}).",
                clause,
                "account",
            )
    if rule.at_terminal and actor.role is Role.PLAYER and not actor.terminal:
        raise PolicyError(
            f"A player starts {rule.what} only from an authenticated terminal ({clause}).",
            clause,
            "terminal",
        )
    return rule.source, rule.target
