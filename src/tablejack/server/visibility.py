"""The information policy: what each role and identity may see of a table, a round, a recall and
a shoe at each phase — one module, as :mod:`tablejack.store.policy` is for money. Every view that
leaves the server (the REST routes, the WebSocket frames, game and terminal recall) is built from
the game's data and then passed through the function here that fits it; nothing is shown that
these functions did not let through.

The policy (docs/security.md, "The information policy"):

* **Nobody sees a card face down or not yet dealt**, whatever his role, until it is turned: the
  dealer's hole card of a classic or version A round, from the moment it is dealt until the
  engine turns it (:func:`face_down`). PA 633c.5(o) has the dealer move the hole card into the
  card reader "without exposing it to anyone at the table, including the dealer": the card
  reader peeks, the engine knows, and no API — not the dealer console's, not the supervisor's —
  gives its value. The cards still in the shoe are never listed in order (no API reads the
  virtual shoe's order); a count by code counts a face-down card as still in the shoe
  (:func:`shoe`), so two counts cannot be subtracted into the hole card. Version B (no hole
  card, PA 633c.5(w)) and multi-action (the dealer's first card face up, his next ones drawn
  after every hand is played, NJ MAB (f)(2)) deal nothing face down.
* **A player** sees everything face up at his table, his own wagers, decisions, settlements and
  balance; another player of the round is named only by a label (``player 2``: the order of his
  first wager), never by his account, and no other player's balance, limits or ledger.
* **Staff** see by role and need: the dealer and the supervisor the whole table face up (every
  player's wagers and hands, the card request, the transcript); the cashier and the operator
  the table's status without the round's cards (:func:`staff_state`); a round that is over
  (complete or void) shows the supervisor and the operator its every card in recall. Money
  stays with the money routes and their roles (:data:`tablejack.store.policy.PERMISSIONS`).
* **The cage**: a supervisor sees every cashier's totals, drawers and requests (he approves and
  audits them); a cashier sees the cage's totals and only his own drawers, per-cashier totals
  and requests (:func:`cage_report`, :func:`cage_requests`).

The functions are pure: they take the viewer, the round (the engine's object, read-only) and the
document built for it, and return what may be shown.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tablejack.core.hands import Hand

__all__ = [
    "FACE_DOWN",
    "HOLE_CARD_RULE",
    "STAFF",
    "Concealer",
    "Viewer",
    "cage_report",
    "cage_requests",
    "conceal",
    "conceal_text",
    "face_down",
    "face_down_codes",
    "player_view",
    "pseudonyms",
    "round_recall",
    "shoe",
    "staff_state",
    "staff_view",
    "terminal_recall",
    "void_notice",
]

FACE_DOWN = "back"
"""What a face-down card is shown as (the terminal draws a card's back)."""
HOLE_CARD_RULE = "PA 633c.5(o)"
"""The hole card goes into the card reader without being exposed to anyone, the dealer too."""
STAFF = frozenset({"dealer", "supervisor", "cashier", "operator"})
"""The roles that see a table as staff (the whole table face up, every player named)."""
AUDIT = frozenset({"supervisor", "operator"})
"""The roles that audit a round that is over: every card of it, face down or not."""
ROUND_READERS = frozenset({"dealer", "supervisor"})
"""The staff who see the round in progress (its cards, wagers, transcript): the dealer who
deals it and the supervisor who watches it; the cashier and the operator see the table's
status, not its cards (their work is money and the floor's set-up)."""
ROUND_FIELDS = ("view", "transcript", "shoe")
"""What of a staff state message is the round in progress and the shoe."""


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who looks: a role (``player``, a staff role, ``terminal``, ``anonymous``), the subject
    (a player's account, a staff member's name) and the terminal of a player's session."""

    role: str
    subject: str = ""
    terminal: str = ""

    @classmethod
    def of(cls, principal: Any) -> Viewer:
        """The viewer of a credential (anything with ``role``, ``subject`` and ``terminal``)."""
        return cls(
            str(principal.role),
            str(principal.subject),
            str(getattr(principal, "terminal", "") or ""),
        )

    @property
    def staff(self) -> bool:
        """True for the dealer, the supervisor, the cashier and the operator."""
        return self.role in STAFF


# -- what is face down -------------------------------------------------------------------


def face_down(round_: Any) -> tuple[int, ...]:
    """The places, in the order the round's cards were dealt (its ``cards_dealt`` and its
    ``card`` events), of the cards on the layout face down now: the dealer's hole card of a
    classic or version A round from its deal until it is turned (PA 633c.5(n)(4), (o)). Empty
    for a round without one (version B, multi-action) or once it is turned."""
    if round_ is None or getattr(round_, "hole_card_revealed", True):
        return ()
    place = 0
    for operation in round_.operations:
        if operation.kind != "card":
            continue
        if operation.target == "dealer hole card":
            return (place,)
        place += 1
    return ()


def face_down_codes(round_: Any) -> list[str]:
    """The codes of the cards :func:`face_down` names (for the counts that must not tell)."""
    dealt = getattr(round_, "cards_dealt", [])
    return [dealt[place].code for place in face_down(round_) if place < len(dealt)]


def _masked_dealer(round_: Any, dealer: dict[str, Any]) -> dict[str, Any]:
    """The dealer's box with the hole card face down: its value, the totals it would tell and
    whether it makes a Blackjack withheld; the up card's total shown (``showing``)."""
    out = dict(dealer)
    for key in ("cards", "all_cards"):
        cards = out.get(key)
        if isinstance(cards, list) and len(cards) > 1:
            out[key] = [cards[0], FACE_DOWN, *cards[2:]]
    for key in ("hole_card", "total", "dealer_total", "dealer_blackjack"):
        if key in out:
            out[key] = None
    up = round_.dealer.cards[:1]
    for key in ("soft", "blackjack", "bust"):
        if key in out:
            out[key] = False
    if "showing" in out or "soft" in out:
        hand = Hand(up)
        out["showing"] = {"total": hand.total, "soft": hand.is_soft} if up else None
    return out


# -- the table ---------------------------------------------------------------------------


def staff_view(round_: Any, view: dict[str, Any]) -> dict[str, Any]:
    """The staff's view of a round (the adapter's audit view): every card face up shown, a
    face-down card not (:data:`HOLE_CARD_RULE`)."""
    hidden = face_down(round_)
    if not hidden:
        return view
    out = dict(view)
    dealer = out.get("dealer")
    if isinstance(dealer, dict):
        out["dealer"] = _masked_dealer(round_, dealer)
    dealt = out.get("cards_dealt")
    if isinstance(dealt, list):
        out["cards_dealt"] = [
            FACE_DOWN if place in hidden else code for place, code in enumerate(dealt)
        ]
    return out


def staff_state(viewer: Viewer, state: dict[str, Any]) -> dict[str, Any]:
    """A staff state message (the table's status, round, instruction, procedures, and the
    round in progress) as ``viewer`` may see it: the round's view, transcript and shoe only for
    :data:`ROUND_READERS`; the others get the table without them (``None``)."""
    if viewer.role in ROUND_READERS:
        return state
    return state | dict.fromkeys(ROUND_FIELDS)


def player_view(viewer: Viewer, round_: Any, view: dict[str, Any] | None) -> dict[str, Any] | None:
    """A player's view of a round (the adapter's terminal view, which shows nothing face down):
    every other player of the round named by his label, not his account."""
    if view is None or round_ is None:
        return view
    names = pseudonyms(round_, viewer.subject)
    if not names:
        return view
    concealed: dict[str, Any] = conceal(view, names)
    return concealed


def shoe(round_: Any, inventory: dict[str, Any] | None) -> dict[str, Any] | None:
    """A shoe's inventory as the staff see it: the count by code counts a face-down card as
    still in the shoe (``face_down``: how many are counted so), so that two counts, before and
    after the hole card is read, do not tell its value."""
    if inventory is None:
        return None
    codes = face_down_codes(round_)
    if not codes:
        return inventory
    out = dict(inventory)
    by_code = dict(out.get("remaining_by_code") or {})
    for code in codes:
        by_code[code] = by_code.get(code, 0) + 1
    out["remaining_by_code"] = dict(sorted(by_code.items()))
    out["face_down"] = len(codes)
    return out


def void_notice(
    viewer: Viewer, table: str, round_id: str, reason: str, refunds: Iterable[tuple[str, int]]
) -> dict[str, Any] | None:
    """What a socket at the table is told when a round is voided (PA 633a.14): the round, the
    supervisor's reason and, to a player, what came back to his own account (never another's);
    the staff read the void in the state and the recall."""
    if viewer.role != "player":
        return None
    refunded = sum(amount for player, amount in refunds if player == viewer.subject)
    return {
        "type": "voided",
        "table": table,
        "round_id": round_id,
        "reason": reason,
        "refunded": refunded,
    }


# -- other players -----------------------------------------------------------------------


def _players(round_: Any) -> list[str]:
    """The round's players in the order of their first wager."""
    names: list[str] = []
    for wager in getattr(round_, "wagers", ()):
        if wager.player not in names:
            names.append(wager.player)
    return names


def pseudonyms(round_: Any, subject: str) -> dict[str, str]:
    """Each other player of the round (every one but ``subject``) → his label, ``player N``
    (N: the order of his first wager)."""
    return {
        name: f"player {number}"
        for number, name in enumerate(_players(round_), start=1)
        if name != subject and name
    }


def _pattern(names: Iterable[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])")


def conceal(value: Any, names: Mapping[str, str]) -> Any:
    """``value`` (JSON data) with every name of ``names`` replaced by its label: a string that
    is the name, and the name as a word within a text (a transcript's line)."""
    if not names:
        return value
    pattern = _pattern(names)

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            found = names.get(item)
            if found is not None:
                return found
            return pattern.sub(lambda match: names[match.group(0)], item)
        if isinstance(item, dict):
            return {key: walk(entry) for key, entry in item.items()}
        if isinstance(item, list):
            return [walk(entry) for entry in item]
        return item

    return walk(value)


def conceal_text(
    text: str, names: Mapping[str, str], encode: Any, among: Iterable[str] = ()
) -> str:
    """:func:`conceal` of an encoded JSON text (``encode``: the compact JSON encoder that made
    it): each name's JSON string, where it is a value, becomes its label's. ``among``: every
    name that one viewer or another conceals (the round's players, :func:`pseudonyms` of no
    one), so that the texts of all the viewers of a round share one pattern — a pattern per
    viewer and round would overflow its cache on a floor of hundreds of tables, and compiling
    one is dearer than the substitution."""
    if not names:
        return text
    tokens = {encode(name): encode(label) for name, label in names.items()}
    pattern = _token_pattern(tuple(sorted({*tokens, *(encode(name) for name in among)})))
    return pattern.sub(lambda match: tokens.get(match.group(0), match.group(0)), text)


class Concealer:
    """:func:`conceal_text` for every viewer of one round at once (a broadcast): each viewer's
    text comes in pieces (the parts of the round's view several viewers share, each one the same
    string for all of them), and each distinct piece is searched for the round's names once; a
    viewer's text is then its pieces joined, each name found his label's or, his own, left as it
    is. The same text as :func:`conceal_text` of the joined pieces with :func:`pseudonyms` of the
    viewer, as long as no piece ends inside a JSON string or just before the ``:`` of a key
    (pieces of encoded JSON values and the punctuation between them)."""

    def __init__(self, round_: Any, encode: Any, among: Iterable[str] = ()) -> None:
        """``among``: names the pattern may search for besides the round's players (left as
        they are where found): the players at the table's terminals, whose set changes far
        less often than the round's, which grows with every wager — a pattern is compiled
        for each new set."""
        self.encode = encode
        self.labels = {
            encode(name): encode(label) for name, label in pseudonyms(round_, "").items()
        }
        """Each of the round's players' name as a JSON string → his label as one."""
        searched = {*self.labels, *(encode(name) for name in among if name)}
        self.pattern = _token_pattern(tuple(sorted(searched))) if self.labels else None
        self._pieces: dict[str, tuple[str, frozenset[str], list[str]] | None] = {}
        """Each piece seen → None (no name in it), or the piece with every name its label's,
        the names it holds, and its split at them (``[text, name, text, …]``)."""

    def text(self, pieces: Iterable[str], subject: str) -> str:
        """The pieces of ``subject``'s text joined, every other player of the round named by
        his label."""
        if self.pattern is None:
            return "".join(pieces)
        own = self.encode(subject)
        out: list[str] = []
        for piece in pieces:
            if piece in self._pieces:
                found = self._pieces[piece]
            else:
                found = self._pieces[piece] = self._searched(piece)
            if found is None:
                out.append(piece)
            elif own not in found[1]:
                out.append(found[0])
            else:  # his own name among the others: kept
                split = found[2]
                out.extend(
                    part if index % 2 == 0 or part == own else self.labels.get(part, part)
                    for index, part in enumerate(split)
                )
        return "".join(out)

    def _searched(self, piece: str) -> tuple[str, frozenset[str], list[str]] | None:
        assert self.pattern is not None
        split: list[str] = self.pattern.split(piece)
        if len(split) == 1:
            return None
        names = frozenset(split[1::2])
        if names.isdisjoint(self.labels):
            return None  # only names that are not the round's players'
        labelled = "".join(
            part if index % 2 == 0 else self.labels.get(part, part)
            for index, part in enumerate(split)
        )
        return labelled, names, split


@functools.lru_cache(maxsize=1024)
def _token_pattern(tokens: tuple[str, ...]) -> re.Pattern[str]:
    """The pattern of JSON string tokens where they are values, not keys (built once per set
    of names: a broadcast asks for the same sets again and again)."""
    alternatives = "|".join(re.escape(token) for token in sorted(tokens, key=len, reverse=True))
    return re.compile(f"({alternatives})" + r"(?!\s*:)")  # (one group: ``split`` keeps it)


# -- recall ------------------------------------------------------------------------------


def _hidden_places(viewer: Viewer, round_: Any, status: str) -> tuple[int, ...]:
    """The card places a recall withholds from ``viewer``: the cards face down, unless the
    round is over and the viewer audits it."""
    hidden = face_down(round_)
    if hidden and status != "open" and viewer.role in AUDIT:
        return ()
    return hidden


def round_recall(viewer: Viewer, document: dict[str, Any], round_: Any) -> dict[str, Any]:
    """Game recall (``GET /api/rounds/{id}``) as ``viewer`` may read it. Every card face down is
    shown as such; a player (who played the round: the route checks) reads his own decisions,
    the dealer's and the clock's, his own settlements, no event, and the other players by their
    labels."""
    out = copy.deepcopy(document)
    hidden = _hidden_places(viewer, round_, str(document.get("status", "")))
    if hidden:
        places = {card["seq"]: place for place, card in enumerate(out.get("cards", []))}
        hidden_seqs = {seq for seq, place in places.items() if place in hidden}
        for card in out.get("cards", []):
            if card["seq"] in hidden_seqs:
                card["code"] = FACE_DOWN
                card.pop("read_as", None)
        for event in out.get("events", []):
            if event.get("seq") in hidden_seqs and isinstance(event.get("payload"), dict):
                event["payload"] = {**event["payload"], "code": FACE_DOWN}
    if viewer.role != "player":
        return out
    others = set(pseudonyms(round_, viewer.subject)) if round_ is not None else set()
    out["events"] = []
    out["decisions"] = [d for d in out.get("decisions", []) if d.get("actor") not in others]
    out["settlements"] = [
        s for s in out.get("settlements", []) if s.get("player") in (viewer.subject, None)
    ]
    if round_ is not None:
        out = conceal(out, pseudonyms(round_, viewer.subject))
    return out


def terminal_recall(
    viewer: Viewer,
    documents: list[dict[str, Any]],
    hidden: Mapping[str, set[int]],
) -> list[dict[str, Any]]:
    """Terminal recall (``GET /api/floor/terminals/{id}/recall``) as ``viewer`` may read it:
    the card steps of ``hidden`` (round id → the seqs of its cards face down now, see
    :func:`face_down`) shown face down, whoever asks."""
    out = []
    for document in documents:
        seqs = hidden.get(str(document.get("round_id")), set())
        if not seqs:
            out.append(document)
            continue
        steps = [
            {**step, "card": FACE_DOWN} if step.get("seq") in seqs and "card" in step else step
            for step in document.get("steps", [])
        ]
        out.append({**document, "steps": steps})
    return out


# -- the cage ------------------------------------------------------------------------------

CAGE_AUDITORS = frozenset({"supervisor"})
"""The roles that see every cashier's drawers, totals and requests."""


def cage_report(viewer: Viewer, report: dict[str, Any]) -> dict[str, Any]:
    """The cage's report as ``viewer`` may read it: a supervisor all of it; a cashier the
    cage's totals with his own per-cashier totals and drawers only."""
    if viewer.role in CAGE_AUDITORS:
        return report
    out = dict(report)
    out["cashiers"] = {
        name: totals
        for name, totals in (report.get("cashiers") or {}).items()
        if name == viewer.subject
    }
    out["drawers"] = [d for d in report.get("drawers") or [] if d.get("cashier") == viewer.subject]
    return out


def cage_transactions(
    viewer: Viewer, transactions: Iterable[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The cage's transactions as ``viewer`` may read them (a shift's list, a receipt): a
    supervisor every cashier's; a cashier only his own."""
    if viewer.role in CAGE_AUDITORS:
        return list(transactions)
    return [t for t in transactions if t.get("cashier") == viewer.subject]


def cage_requests(viewer: Viewer, requests: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The approval queue as ``viewer`` may read it: a supervisor every request; anyone else
    only his own."""
    if viewer.role in CAGE_AUDITORS:
        return list(requests)
    return [r for r in requests if r.get("requested_by") == viewer.subject]
