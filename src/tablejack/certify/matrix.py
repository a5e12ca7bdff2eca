"""The clause matrix: which tests and scenarios prove which clause, by the clause ids they carry.

* A **test** carries its clauses in its name (``docs/architecture.md``: tests name the clause they check):
  ``test_633b16_h_settles_before_blackjack_wager`` → ``PA 633b.16(h)``;
  ``test_633c5_aa1_ii_blackjack_paid…`` → ``PA 633c.5(aa)(1)(ii)``;
  ``test_633c5_z_c2_countdown…`` → ``PA 633c.5(z)`` and ``PA 633c.5(c)(2)``;
  ``test_nj_f4_a24_…`` → ``NJ MAB (f)(4)`` and ambiguity A-24. After the section (``633b16``,
  ``633c5``, ``nj``) each underscore-separated token is a clause (a letter or two with an optional
  number, ``aa1``, ``b2iii``), a roman sub-clause of the one before (``i``, ``ii``, ``iii``) or an
  ambiguity (``a24``); the first token that is none of these, or names no clause of the text,
  ends the list (so ``test_633c5_aa3_i_a_hit…`` is (aa)(3)(i) only: a word ``a`` after the first
  clause is English). A name with the section and no clause proves the section as a whole.
* A **scenario** carries its clauses as citations anywhere in the file (comments, expected
  clauses, refusals): ``PA 633c.5(t)(1)(ii), (v)(1)``, ``633b.16(h)``, ``NJ MAB (f)(5); A-25``.

A clause is *covered* when a test or scenario cites it or one of its sub-clauses.

>>> test_citations("test_633c5_aa1_ii_blackjack_paid_3_to_2")
(('PA 633c.5(aa)(1)(ii)',), ())
>>> test_citations("test_nj_f4_a24_dealer_stands_on_soft_17_by_default")
(('NJ MAB (f)(4)',), ('A-24',))
>>> test_citations("test_633c5_aa3_i_a_hit_after_a_double_is_refused")
(('PA 633c.5(aa)(3)(i)',), ())
>>> text_citations("win (PA 633c.5(t)(1)(ii), (v)(1)); NJ MAB (f)(5); A-25 and 633b.16(h)")
(('PA 633b.16(h)', 'PA 633c.5(t)(1)(ii)', 'PA 633c.5(v)(1)', 'NJ MAB (f)(5)'), ('A-25',))
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tablejack.certify.clauses import CLAUSES, Clause

__all__ = ["covering", "test_citations", "text_citations"]

_SECTIONS = {"633b16": "PA 633b.16", "633c5": "PA 633c.5", "nj": "NJ MAB"}
_IDS = {item.id for item in CLAUSES}
_TOKEN = re.compile(r"^([a-z]{1,2})([0-9]{0,2})(i{1,3}|iv|v)?$")
_ROMAN = {"i", "ii", "iii", "iv", "v"}


def _clause_id(section: str, path: str) -> str:
    return Clause(section, path, "").id


def test_citations(name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The clause ids and ambiguity ids a test's name carries (none if it names no section)."""
    parts = name.split("[", 1)[0].split("_")
    if len(parts) < 2 or parts[0] != "test" or parts[1] not in _SECTIONS:
        return (), ()
    section = _SECTIONS[parts[1]]
    clauses: list[str] = []
    ambiguities: list[str] = []
    last_numbered: str | None = None
    for position, token in enumerate(parts[2:]):
        if re.fullmatch(r"a[0-9]{1,2}", token):
            ambiguities.append(f"A-{int(token[1:])}")
            last_numbered = None
            continue
        if token in _ROMAN and last_numbered is not None:
            candidate = f"{last_numbered}({token})"
            if _clause_id(section, candidate) not in _IDS:
                break
            if clauses and clauses[-1] == _clause_id(section, last_numbered):
                clauses.pop()  # (aa)(1) then ii: the test cites (aa)(1)(ii)
            clauses.append(_clause_id(section, candidate))
            continue
        if token == "a" and position > 0:
            break  # the English article
        match = _TOKEN.match(token)
        if match is None:
            break
        letters, number, roman = match.groups()
        path = f"({letters})" + (f"({int(number)})" if number else "")
        if roman:
            if not number:
                break
            path += f"({roman})"
        if _clause_id(section, path) not in _IDS:
            break
        clauses.append(_clause_id(section, path))
        last_numbered = path if number and not roman else None
    if not clauses:
        clauses.append(_clause_id(section, ""))
    return tuple(dict.fromkeys(clauses)), tuple(dict.fromkeys(ambiguities))


_CITATION = re.compile(
    r"(?:(?:PA\s+)?(633b\.16|633c\.5)|NJ MAB\s*)((?:\([a-z0-9]+\))+)((?:,\s*(?:\([a-z0-9]+\))+)*)"
)
_PATH = re.compile(r"(?:\([a-z0-9]+\))+")
_AMBIGUITY = re.compile(r"\bA-([0-9]{1,2})\b")


def text_citations(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The clause ids (every one the texts have, in catalogue order) and the ambiguity ids
    cited in ``text``."""
    found: set[str] = set()
    for match in _CITATION.finditer(text):
        section = f"PA {match.group(1)}" if match.group(1) else "NJ MAB"
        for path in [match.group(2), *_PATH.findall(match.group(3) or "")]:
            if _clause_id(section, path) in _IDS:
                found.add(_clause_id(section, path))
    clauses = tuple(item.id for item in CLAUSES if item.id in found)
    ambiguities = tuple(dict.fromkeys(f"A-{int(number)}" for number in _AMBIGUITY.findall(text)))
    return clauses, ambiguities


def covering(clause_id: str, cited: Iterable[str]) -> bool:
    """Whether a citation list proves ``clause_id`` itself or one of its sub-clauses (a
    section id is proved by any clause of it)."""
    item = next(c for c in CLAUSES if c.id == clause_id)
    for other in cited:
        if other == clause_id:
            return True
        if not item.path:
            if other.startswith(item.section):
                return True
        elif other.startswith(clause_id + "(") and other[: len(item.section)] == item.section:
            return True
    return False
