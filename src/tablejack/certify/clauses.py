"""Every clause of the three regulation texts tablejack implements, with a short title, and the
ambiguities of the rules paraphrase with the reading taken and the option that changes it.

The clause ids are enumerated from the texts (``spec/pa-633b16-ez-bust-blackjack.txt``,
``spec/pa-633c5-hybrid-table-blackjack.txt``, ``spec/nj-multi-action-blackjack.txt``); the texts
themselves are not part of the package. ``scope`` says where a clause is carried out: ``engine``
(the game rules: engine, scenarios, lab), ``server`` (the table server and terminals, e.g. the
rules icon) or ``procedure`` (people and equipment on the floor: inspections, layouts, discard
racks), which software cannot prove; the matrix lists every clause either way.

>>> len([c for c in CLAUSES if c.section == "PA 633b.16"])
14
>>> clause("PA 633c.5(aa)(1)(ii)").title
'hole card no Blackjack: Blackjack paid 3 to 2, insurance lost'
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AMBIGUITIES", "CLAUSES", "READINGS", "Ambiguity", "Clause", "clause"]


@dataclass(frozen=True, slots=True)
class Clause:
    """One clause: ``section`` (``PA 633c.5``), ``path`` (``(aa)(1)(ii)``; empty for the
    section itself), a short title and where it is carried out."""

    section: str
    path: str
    title: str
    scope: str = "engine"

    @property
    def id(self) -> str:
        """``PA 633c.5(aa)(1)(ii)``, the form of settlement records and errors."""
        return (
            f"{self.section}{' ' if self.section.startswith('NJ') and self.path else ''}{self.path}"
        )

    @property
    def parent(self) -> str | None:
        """The id of the enclosing clause (None for a section)."""
        if not self.path:
            return None
        head = self.path[: self.path.rindex("(")]
        return Clause(self.section, head, "").id


EZ = "PA 633b.16"
HY = "PA 633c.5"
NJ = "NJ MAB"

_TEXT: tuple[tuple[str, str, str, str], ...] = (
    # PA 633b.16 EZ Bust Blackjack
    (EZ, "", "EZ Bust Blackjack side wager", "engine"),
    (EZ, "(a)", "offered if in the Rules Submission, to players with a Blackjack Wager", "engine"),
    (EZ, "(b)", "otherwise Chapter 633a applies", "engine"),
    (EZ, "(c)", "offered after the dealer's two cards when the up card is 2-6", "engine"),
    (EZ, "(c)(1)", "offered even to a player with Blackjack", "engine"),
    (EZ, "(c)(2)", "one additional EZ Bust wager each time the player splits", "engine"),
    (EZ, "(d)", "up to the initial Blackjack Wager", "engine"),
    (EZ, "(e)", "the round is then completed under 633a.7", "engine"),
    (EZ, "(f)", "win or lose after the dealer's third card or more", "engine"),
    (EZ, "(f)(1)", "wins when the dealer busts", "engine"),
    (EZ, "(f)(2)", "loses when the dealer ends at 21 or less", "engine"),
    (EZ, "(g)", "push-all option when every Blackjack Wager is a Blackjack or bust", "engine"),
    (EZ, "(h)", "settled before the Blackjack Wager and the removal of the cards", "engine"),
    (EZ, "(i)", "pays 1 to 1", "engine"),
    # PA 633c.5 version A
    (HY, "", "Blackjack on a hybrid gaming table", "engine"),
    (HY, "(a)", "hybrid tables and terminals comply with Chapter 605a", "server"),
    (HY, "(b)", "the layout submitted for approval", "procedure"),
    (HY, "(b)(1)", "layout: the certificate holder's name or logo", "procedure"),
    (HY, "(b)(2)", "layout: three boxes for the players' cards", "procedure"),
    (HY, "(b)(3)", "layout: a box for the dealer's cards", "procedure"),
    (HY, "(b)(4)", "layout: a community box for the additional cards", "procedure"),
    (HY, "(c)", "what each electronic wagering terminal contains", "server"),
    (HY, "(c)(1)", "terminal: an approved electronic layout", "server"),
    (
        HY,
        "(c)(2)",
        "terminal: the game rules icon (3 to 2, S17, insurance 2 to 1, countdown options)",
        "server",
    ),
    (HY, "(c)(3)", "terminal: the Buzzer Beater rules icon and payout odds", "server"),
    (HY, "(d)", "a card reader device, inspected each gaming day", "procedure"),
    (HY, "(e)", "a discard rack unless a continuous shuffler is used", "procedure"),
    (HY, "(e)(1)", "discard rack as high as the decks in the shoe", "procedure"),
    (HY, "(e)(2)", "or taller, with a mark at the decks' height", "procedure"),
    (HY, "(f)", "six or eight decks and a card shuffling device", "engine"),
    (HY, "(g)", "decks changed at least every 24 hours", "procedure"),
    (HY, "(h)", "the value of the cards", "engine"),
    (HY, "(h)(1)", "2-10 face value", "engine"),
    (HY, "(h)(2)", "jack, queen, king 10", "engine"),
    (HY, "(h)(3)", "ace 11 unless that exceeds 21, then 1", "engine"),
    (HY, "(i)", "decks inspected by the dealer, verified by the floorperson", "procedure"),
    (HY, "(j)", "washed, shuffled by a device, dealt from a card-reading shoe", "engine"),
    (
        HY,
        "(k)",
        "wagers on the terminals before the first card (except insurance, double, split)",
        "engine",
    ),
    (HY, "(l)", "each player selects a position 1-3 and places a Blackjack Wager", "engine"),
    (HY, "(m)", "the optional Buzzer Beater wager", "engine"),
    (HY, "(n)", "the deal, from the selected position farthest to the dealer's left", "engine"),
    (HY, "(n)(1)", "one card up to each selected position", "engine"),
    (HY, "(n)(2)", "one card up to the dealer", "engine"),
    (HY, "(n)(3)", "a second card up to each position", "engine"),
    (HY, "(n)(4)", "the dealer's second card face down", "engine"),
    (
        HY,
        "(o)",
        "insurance or even money against an ace; the card reader peek; dealer Blackjack",
        "engine",
    ),
    (HY, "(p)", "after the peek", "engine"),
    (HY, "(p)(1)", "a Blackjack against 2-9 paid at once, its Buzzer Beater cleared", "engine"),
    (HY, "(p)(2)", "double, split, stand or hit; the countdown default stands", "engine"),
    (HY, "(q)", "drawn cards are community cards for all positions", "engine"),
    (HY, "(r)", "hit while the count is below 21", "engine"),
    (HY, "(r)(1)", "no draw on a Blackjack or any 21", "engine"),
    (HY, "(r)(2)", "a double uses only the first community card", "engine"),
    (HY, "(s)", "the hole card turned; the dealer draws to 17-21 (S17)", "engine"),
    (HY, "(t)", "the Blackjack Wager wins, pushes or loses", "engine"),
    (HY, "(t)(1)", "wins", "engine"),
    (HY, "(t)(1)(i)", "wins: player 21 or less, dealer over 21", "engine"),
    (HY, "(t)(1)(ii)", "wins: player higher without exceeding 21", "engine"),
    (HY, "(t)(1)(iii)", "wins: Blackjack against a dealer 21 of more cards", "engine"),
    (HY, "(t)(2)", "pushes on equal totals", "engine"),
    (HY, "(t)(3)", "loses", "engine"),
    (HY, "(t)(3)(i)", "loses: player over 21, dealer 21 or less", "engine"),
    (HY, "(t)(3)(ii)", "loses: dealer higher without exceeding 21", "engine"),
    (HY, "(t)(3)(iii)", "loses: dealer Blackjack against a player 21 of more cards", "engine"),
    (HY, "(u)", "the Buzzer Beater wins or loses", "engine"),
    (HY, "(u)(1)", "wins: player 19-21 or Blackjack, dealer equal or greater", "engine"),
    (HY, "(u)(2)", "loses", "engine"),
    (HY, "(u)(2)(i)", "loses: the player's hand beat the dealer's", "engine"),
    (HY, "(u)(2)(ii)", "loses: the dealer beat a hand under 19", "engine"),
    (HY, "(v)", "payout odds", "engine"),
    (HY, "(v)(1)", "Blackjack Wager 1 to 1, Blackjack 3 to 2", "engine"),
    (HY, "(v)(2)", "insurance 2 to 1", "engine"),
    (HY, "(v)(3)", "the Buzzer Beater paytable", "engine"),
    # PA 633c.5 version B
    (HY, "(w)", "version B: no hole card; (a), (c)(1)-(2), (d)-(k) apply", "engine"),
    (HY, "(x)", "Blackjack Wager; optional Royal Match 21, Bet the Set, King's Bounty", "engine"),
    (HY, "(y)", "the shared deal", "engine"),
    (HY, "(y)(1)", "first card: every player's first card", "engine"),
    (HY, "(y)(2)", "second card: the dealer's first card", "engine"),
    (HY, "(y)(3)", "third card: every player's second card", "engine"),
    (HY, "(y)(4)", "later cards are community cards designated by each player's choices", "engine"),
    (
        HY,
        "(z)",
        "insurance, surrender, double, split to two hands, stand, hit; countdown options",
        "engine",
    ),
    (HY, "(aa)", "the first community card after the decisions", "engine"),
    (HY, "(aa)(1)", "player Blackjack: the community card is the dealer's hole card", "engine"),
    (HY, "(aa)(1)(i)", "hole card Blackjack: the wager pushes, insurance paid", "engine"),
    (HY, "(aa)(1)(ii)", "hole card no Blackjack: Blackjack paid 3 to 2, insurance lost", "engine"),
    (HY, "(aa)(2)", "stand on two cards: the first community card is the hole card", "engine"),
    (
        HY,
        "(aa)(2)(i)",
        "hole card Blackjack: the wager lost, no more cards, insurance paid",
        "engine",
    ),
    (HY, "(aa)(2)(ii)", "no Blackjack: insurance lost, later cards to the dealer", "engine"),
    (HY, "(aa)(3)", "hit, split or double: the first community card to the player", "engine"),
    (HY, "(aa)(3)(i)", "split aces or double: one card; over 21 collected at once", "engine"),
    (HY, "(aa)(3)(ii)", "hit or split: hit on; over 21 collected before the hole card", "engine"),
    (HY, "(bb)", "after the player's decisions the next card is the dealer's", "engine"),
    (
        HY,
        "(bb)(1)",
        "dealer Blackjack: wager lost, insurance paid; split: original wager only",
        "engine",
    ),
    (HY, "(bb)(2)", "no Blackjack: insurance lost; the dealer draws to 17-21", "engine"),
    (HY, "(cc)", "the Blackjack Wager settles as in (t)", "engine"),
    (HY, "(dd)", "Royal Match 21, Bet the Set, King's Bounty settled (633a.7(g)(4)-(6))", "engine"),
    (HY, "(ee)", "payout odds (version B)", "engine"),
    (HY, "(ee)(1)", "insurance 2 to 1", "engine"),
    (HY, "(ee)(2)", "Blackjack Wager 1 to 1, Blackjack 3 to 2", "engine"),
    (HY, "(ee)(3)", "Royal Match 21 and Crown Treasure (633a.13(f))", "engine"),
    (HY, "(ee)(4)", "Bet the Set (633a.13(g))", "engine"),
    (HY, "(ee)(5)", "King's Bounty (633a.13(h))", "engine"),
    # NJ multi-action blackjack
    (NJ, "", "NJ multi-action blackjack", "engine"),
    (
        NJ,
        "(a)",
        "definitions: Blackjack, bust, double down on 10 or 11, hole card, insurance, split, stand",
        "engine",
    ),
    (NJ, "(b)", "equipment", "engine"),
    (NJ, "(b)(1)", "a layout with seven betting positions", "procedure"),
    (NJ, "(b)(2)", "one to four decks shuffled together", "engine"),
    (NJ, "(b)(2)(i)", "2-9 face value", "engine"),
    (NJ, "(b)(2)(ii)", "10, jack, queen, king 10", "engine"),
    (NJ, "(b)(2)(iii)", "ace 1 or 11 at the player's discretion", "engine"),
    (NJ, "(c)", "optional equipment", "procedure"),
    (NJ, "(c)(1)", "a dealing shoe", "procedure"),
    (NJ, "(c)(2)", "an automated shuffling device", "procedure"),
    (NJ, "(d)", "the dealer's duties", "engine"),
    (NJ, "(d)(1)", "shuffle, cut and deal (13:47-20.19) and (f)", "engine"),
    (NJ, "(d)(2)", "operate the game under the subchapter", "procedure"),
    (NJ, "(d)(3)", "stand opposite the players", "procedure"),
    (NJ, "(d)(4)", "collect losing and pay winning wagers", "engine"),
    (NJ, "(e)", "up to seven players", "engine"),
    (NJ, "(f)", "method of play and odds", "engine"),
    (
        NJ,
        "(f)(1)",
        "wagers on at least two of three spots; first card to the first square",
        "engine",
    ),
    (
        NJ,
        "(f)(2)",
        "the dealer's first card up, used in all three rounds; no second card until all hands are played",
        "engine",
    ),
    (NJ, "(f)(3)", "stay or hit; over 21 busts and loses", "engine"),
    (NJ, "(f)(4)", "dealer draws to 16, stands on 17; round 1 settled", "engine"),
    (NJ, "(f)(5)", "Blackjack paid 3 to 2 unless the dealer has Blackjack", "engine"),
    (
        NJ,
        "(f)(6)",
        "round 2: hit cards discarded, the first card moved, the hand completed again",
        "engine",
    ),
    (NJ, "(f)(7)", "round 3 likewise", "engine"),
    (NJ, "(f)(8)", "all cards picked up, ending the game", "engine"),
)

CLAUSES: tuple[Clause, ...] = tuple(Clause(*row) for row in _TEXT)
"""Every clause of the three texts, in the texts' order."""

_BY_ID = {item.id: item for item in CLAUSES}


def clause(clause_id: str) -> Clause:
    """The clause with this id (``PA 633b.16(h)``, ``NJ MAB (f)(5)``); KeyError if none."""
    return _BY_ID[clause_id]


@dataclass(frozen=True, slots=True)
class Ambiguity:
    """An ambiguity of the rules paraphrase (``referenced-rules.md`` §5), or another reading
    the project took, with the reading and the rules option that changes it (empty if none)."""

    id: str
    where: str
    reading: str
    option: str
    docs: str
    clauses: tuple[str, ...] = ()
    """The clauses whose tests prove the reading (for readings without an A-number)."""


AMBIGUITIES: tuple[Ambiguity, ...] = (
    Ambiguity(
        "A-1",
        "633c.5 (l)",
        "several players on one position each play an independent hand of the position's cards",
        "",
        "docs/hybrid.md",
    ),
    Ambiguity(
        "A-2",
        "633c.5 (n)(3)",
        "the second card goes to the selected positions only",
        "",
        "docs/hybrid.md",
    ),
    Ambiguity(
        "A-3",
        "633c.5 (q), (r)",
        "one community sequence; each hand takes the next card through its player's cursor",
        "",
        "docs/hybrid.md",
    ),
    Ambiguity(
        "A-4",
        "633c.5 (q); § 633a.11(b)",
        "split hand 1 completed before hand 2 (per-player cursor)",
        "split_card_order (hybrid)",
        "docs/hybrid.md",
    ),
    Ambiguity(
        "A-5",
        "633c.5 (t)(3)(i)",
        "a player who busts loses even if the dealer busts, collected at once",
        "",
        "docs/hybrid.md",
    ),
    Ambiguity(
        "A-6",
        "633c.5 (u)",
        "the Buzzer Beater of a split is judged on the first hand",
        "buzzer_beater_hand",
        "docs/hybrid.md",
    ),
    Ambiguity(
        "A-7",
        "633c.5 (z)",
        "late surrender: the surrendered hand's next card is the hole card",
        "surrender_timing (hybrid-shared)",
        "docs/hybrid-shared.md",
    ),
    Ambiguity(
        "A-8",
        "633c.5 (z) vs (o)",
        "version B offers insurance, not even money",
        "",
        "docs/hybrid-shared.md",
    ),
    Ambiguity(
        "A-9",
        "633c.5 (aa)(3)(i)",
        "each split ace takes one community card in turn",
        "",
        "docs/hybrid-shared.md",
    ),
    Ambiguity(
        "A-10",
        "633c.5 (bb)(1)",
        "split against a dealer Blackjack: loss capped at the original wager, busted hands stay lost",
        "split_against_dealer_blackjack",
        "docs/hybrid-shared.md",
    ),
    Ambiguity(
        "A-11",
        "633c.5 (w)-(dd)",
        "Crown Treasure and King's Bounty's top line use the dealer's two cards as formed for that player",
        "",
        "docs/hybrid-shared.md",
    ),
    Ambiguity(
        "A-12",
        "§ 633a.1 vs § 633a.11",
        "Bet the Set pays same-rank pairs; splitting uses same value",
        "",
        "docs/hybrid-shared.md",
    ),
    Ambiguity(
        "A-13",
        "633c.5 (v)(3)",
        "the 30-to-1 Buzzer Beater row implemented as given; the loader warns",
        "buzzer_beater_paytable, buzzer_beater_review_odds",
        "docs/hybrid.md",
    ),
    Ambiguity(
        "A-14",
        "633c.5 (u)(1) vs (v)(3)",
        "a (u)(1) win without a paytable row loses",
        "buzzer_beater_no_row",
        "docs/hybrid.md",
    ),
    Ambiguity(
        "A-15", "633c.5 (u)(2)", "a tie under 19 loses the Buzzer Beater", "", "docs/hybrid.md"
    ),
    Ambiguity("A-16", "633c.5 (m) vs (u)(1)", "ties pay the Buzzer Beater", "", "docs/hybrid.md"),
    Ambiguity(
        "A-17",
        "633c.5 (p)(2) vs (z)",
        "no surrender in version A; surrender in version B",
        "",
        "docs/hybrid.md",
    ),
    Ambiguity(
        "A-18",
        "633c.5 (x) vs (dd)",
        "Kings Bounty and King's Bounty, Royal Match wager and Royal Match 21 are the same wagers",
        "",
        "docs/hybrid-shared.md",
    ),
    Ambiguity(
        "A-19",
        "633c.5 (aa)(3)(i)",
        "a live double against a dealer Blackjack loses the original wager; a busted double 2W",
        "double_against_dealer_blackjack",
        "docs/hybrid-shared.md",
    ),
    Ambiguity(
        "A-20",
        "633b.16 (f)",
        "§ 633a.7(l) '(n) read as (l)-(n), the dealer's drawing rules",
        "",
        "docs/rules.md",
    ),
    Ambiguity(
        "A-21",
        "633b.16 (f)",
        "a dealer two-card soft 17 (no third card): EZ Bust loses",
        "",
        "docs/rules.md",
    ),
    Ambiguity(
        "A-22",
        "633b.16 (g)",
        "without push-all the dealer completes the hand while an EZ Bust wager is live",
        "ez_bust_push_all",
        "docs/rules.md",
    ),
    Ambiguity(
        "A-23",
        "633b.16 (c)-(d)",
        "EZ Bust stays live after surrender or bust; one more wager per split",
        "",
        "docs/rules.md",
    ),
    Ambiguity(
        "A-24",
        "NJ (f)(4)",
        "the dealer stands on soft 17",
        "dealer_hits_soft_17 (multi-action)",
        "docs/multi-action.md",
    ),
    Ambiguity(
        "A-25",
        "NJ (f)(5)",
        "each spot settled against its own round's dealer hand",
        "",
        "docs/multi-action.md",
    ),
    Ambiguity(
        "A-26", "NJ (f)(3)", "a bust loses every spot the player backed", "", "docs/multi-action.md"
    ),
    Ambiguity(
        "A-27",
        "NJ",
        "splits matched on every spot, doubles per spot, insurance against round 1 only",
        "insurance (multi-action); the double's spots by command",
        "docs/multi-action.md",
    ),
    Ambiguity(
        "A-28",
        "NJ (f)(1)",
        "a round without a wager is skipped and draws no card",
        "",
        "docs/multi-action.md",
    ),
    Ambiguity(
        "A-29",
        "NJ",
        "a dealer Blackjack takes the full amount at risk on the spot",
        "",
        "docs/multi-action.md",
    ),
)
"""The ambiguity table of ``referenced-rules.md`` §5 as the project reads it."""

READINGS: tuple[Ambiguity, ...] = (
    Ambiguity(
        "NJ (b)(2)(iii)",
        "NJ (a), (b)(2)(iii)",
        "an ace and a nine are 20 for the double-down test (the ace counts 11 unless that exceeds 21)",
        'double_ace_value = "one-or-eleven"',
        "docs/multi-action.md",
        ("NJ MAB (b)(2)(iii)",),
    ),
    Ambiguity(
        "633c.5 (aa)(1)",
        "633c.5 (aa)(1)",
        "a player Blackjack's community card is the hole card only; no later card is revealed for it",
        "",
        "docs/hybrid-shared.md",
        ("PA 633c.5(aa)(1)",),
    ),
    Ambiguity(
        "633c.5 (z), (c)(2)",
        "633c.5 (p)(2), (z), (c)(2)",
        "the countdown default stands",
        "countdown_default, countdown_table",
        "docs/hybrid.md",
        ("PA 633c.5(z)", "PA 633c.5(c)(2)"),
    ),
)
"""Other readings of the texts the project documents (not numbered in the paraphrase)."""
