"""A cash-out voucher as paper (PA 605a.5(c)): a printable ticket — HTML for the terminal's
printer or a browser's print dialog — that carries the validation number as an Interleaved 2
of 5 barcode (the symbology of TITO tickets; a cage's hand scanner reads it as keyboard input)
and in figures, the amount in figures and in words, the date and time of issue, the terminal
and table it was printed at, the voucher number, its expiry and the casino's name — or the same
ticket as ESC/POS commands for a receipt printer (:func:`ticket_escpos`, python-escpos; the
printer draws the barcode itself). Its times are in the floor's time zone (the setting
``sas_time_zone``, an IANA name).

A cage receipt (:func:`receipt_html`, :func:`receipt_escpos`) is the paper of one of the cage's
transactions — a voucher redeemed, sold or voided, credit sold, a hand pay: the casino's name,
the cashier, the time in the floor's time zone, the amount in dollars, the voucher number masked
but for its last four digits, and the transaction's id (its event's log and number).

>>> amount_in_words(123_45)
'ONE HUNDRED TWENTY-THREE DOLLARS AND 45/100'
>>> amount_in_words(1_000_000_00)
'ONE MILLION DOLLARS AND 00/100'
>>> grouped("123456789012345611")
'12-3456-7890-1234-5611'
>>> masked("000000000042")
'********0042'
>>> local_when(1_780_000_000_000_000, "America/New_York")
'2026-05-28 16:26:40 EDT'
"""

from __future__ import annotations

import html
import io
import re
from datetime import UTC, datetime, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tablejack.core.money import format_cents

__all__ = [
    "RECEIPT_TITLES",
    "amount_in_words",
    "barcode_svg",
    "grouped",
    "local_when",
    "masked",
    "receipt_escpos",
    "receipt_html",
    "ticket_escpos",
    "ticket_html",
]

_ONES = [
    "ZERO",
    "ONE",
    "TWO",
    "THREE",
    "FOUR",
    "FIVE",
    "SIX",
    "SEVEN",
    "EIGHT",
    "NINE",
    "TEN",
    "ELEVEN",
    "TWELVE",
    "THIRTEEN",
    "FOURTEEN",
    "FIFTEEN",
    "SIXTEEN",
    "SEVENTEEN",
    "EIGHTEEN",
    "NINETEEN",
]
_TENS = ["_", "_", "TWENTY", "THIRTY", "FORTY", "FIFTY", "SIXTY", "SEVENTY", "EIGHTY", "NINETY"]
_GROUPS = ((1_000_000_000, "BILLION"), (1_000_000, "MILLION"), (1_000, "THOUSAND"))


def _under_thousand(n: int) -> list[str]:
    words: list[str] = []
    if n >= 100:
        words += [_ONES[n // 100], "HUNDRED"]
        n %= 100
    if n >= 20:
        words.append(_TENS[n // 10] + (f"-{_ONES[n % 10]}" if n % 10 else ""))
    elif n or not words:
        words.append(_ONES[n])
    return words


def _dollars(n: int) -> list[str]:
    words: list[str] = []
    for size, name in _GROUPS:
        if n >= size:
            words += [*_dollars(n // size), name]
            n %= size
    if n or not words:
        words += _under_thousand(n)
    return words


def amount_in_words(cents: int) -> str:
    """A cheque's words for ``cents``: the dollars in words and the cents over 100."""
    dollars, rest = divmod(cents, 100)
    unit = "DOLLAR" if dollars == 1 else "DOLLARS"
    return f"{' '.join(_dollars(dollars))} {unit} AND {rest:02d}/100"


def grouped(code: str) -> str:
    """The validation number as TITO tickets print it: two digits, then groups of four."""
    return "-".join([code[:2]] + [code[i : i + 4] for i in range(2, len(code), 4)])


def barcode_svg(code: str) -> str:
    """The validation number as an Interleaved 2 of 5 barcode (SVG, no text under it)."""
    import barcode  # type: ignore[import-untyped]
    from barcode.writer import SVGWriter  # type: ignore[import-untyped]

    out = io.BytesIO()
    symbol = barcode.get("itf", code, writer=SVGWriter())
    symbol.write(
        out,
        options={
            "write_text": False,
            "module_width": 0.25,
            "module_height": 14.0,
            "quiet_zone": 4.0,
        },
    )
    svg = out.getvalue().decode()
    svg = svg[svg.index("<svg") :]
    # lengths in user units and a viewBox, so the barcode scales into a narrow ticket whole
    width, height = re.search(r'width="([\d.]+)mm" height="([\d.]+)mm"', svg).groups()  # type: ignore[union-attr]
    svg = re.sub(r'="([\d.]+)mm"', r'="\1"', svg)
    return svg.replace(
        f'width="{width}" height="{height}"',
        f'width="{width}mm" height="{height}mm" viewBox="0 0 {width} {height}"',
        1,
    )


def _zone(name: str) -> tzinfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return UTC


def local_when(us: int, zone: str = "UTC") -> str:
    """A time (µs) in the floor's time zone ``zone`` (an IANA name; UTC when unknown), with
    the zone's abbreviation."""
    return datetime.fromtimestamp(us / 1_000_000, _zone(zone)).strftime("%Y-%m-%d %H:%M:%S %Z")


def masked(number: str) -> str:
    """A voucher number as a receipt prints it: masked but for its last four digits."""
    return "*" * max(len(number) - 4, 0) + number[-4:]


STYLE = """
body { font-family: "DejaVu Sans Mono", monospace; margin: 0; background: #fff; color: #000; }
.ticket { width: 76mm; max-width: calc(100vw - 4mm); box-sizing: border-box; margin: 2mm auto;
  padding: 3mm; border: 1px dashed #000; }
h1 { font-size: 15pt; text-align: center; margin: 0 0 2mm; }
h2 { font-size: 11pt; text-align: center; margin: 0 0 3mm; letter-spacing: .1em; }
.barcode svg { display: block; margin: 0 auto; max-width: 100%; height: auto; }
.code { text-align: center; font-size: 12pt; font-weight: bold; margin: 1mm 0 3mm; }
.amount { text-align: center; font-size: 18pt; font-weight: bold; margin: 2mm 0 1mm; }
.words { text-align: center; font-size: 8pt; margin-bottom: 3mm; }
dl { display: grid; grid-template-columns: auto 1fr; gap: 1mm 3mm; font-size: 9pt; margin: 0; }
dt { font-weight: bold; } dd { margin: 0; }
.state { text-align: center; font-weight: bold; font-size: 12pt; border: 2px solid #000; margin-top: 3mm; }
@media print { .ticket { border: none; margin: 0; } }
"""


def ticket_html(
    voucher: dict[str, Any],
    code: str,
    *,
    casino: str,
    table: str,
    expiry_days: int,
    zone: str = "UTC",
) -> str:
    """The printable ticket of ``voucher`` (its record, :func:`tablejack.store.cage.
    voucher_by_code`) and its validation ``code``; a voucher no longer payable is marked so."""
    e = html.escape
    state = "" if voucher["status"] == "issued" else f"VOID — {e(str(voucher['status']).upper())}"
    rows = _fields(voucher, code, table=table, expiry_days=expiry_days, zone=zone)
    fields = "".join(f"<dt>{e(name)}</dt><dd>{e(str(value))}</dd>" for name, value in rows)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>Voucher {e(voucher['number'])}</title><style>{STYLE}</style></head><body>"
        '<article class="ticket" data-testid="ticket">'
        f"<h1>{e(casino)}</h1><h2>CASHOUT VOUCHER</h2>"
        f'<div class="barcode" data-testid="ticket-barcode" aria-label="barcode {e(code)}">'
        f"{barcode_svg(code)}</div>"
        f'<div class="code" data-testid="ticket-code">{e(grouped(code))}</div>'
        f'<div class="amount" data-testid="ticket-amount">'
        f"{e(format_cents(int(voucher['amount'])))}</div>"
        f'<div class="words" data-testid="ticket-words">'
        f"{e(amount_in_words(int(voucher['amount'])))}</div>"
        f"<dl>{fields}</dl>"
        + (f'<p class="state" data-testid="ticket-state">{state}</p>' if state else "")
        + "</article></body></html>"
    )


def _fields(
    voucher: dict[str, Any], code: str, *, table: str, expiry_days: int, zone: str = "UTC"
) -> list[tuple[str, str]]:
    issued = int(voucher["issued_us"])
    expires = (
        local_when(issued + expiry_days * 86_400_000_000, zone)
        if expiry_days > 0
        else "does not expire"
    )
    where = f"{voucher['terminal']} · table {table}" if table else str(voucher["terminal"])
    return [
        ("Validation", grouped(code)),
        ("Date", local_when(issued, zone)),
        ("Terminal", where),
        ("Voucher #", str(voucher["number"])),
        ("Expires", expires),
    ]


def ticket_escpos(
    voucher: dict[str, Any],
    code: str,
    *,
    casino: str,
    table: str,
    expiry_days: int,
    zone: str = "UTC",
) -> bytes:
    """The ticket as ESC/POS commands (python-escpos, its ``Dummy`` printer collects them): the
    casino's name, the validation number as the printer's own Interleaved 2 of 5 barcode with
    the digits under it, the amount in figures and in words, the fields, and a cut."""
    from escpos.printer import Dummy  # type: ignore[import-untyped]

    printer = Dummy()
    printer.set(align="center", bold=True, double_height=True, double_width=True)
    printer.text(f"{casino}\n")
    printer.set(align="center", bold=True, normal_textsize=True)
    printer.text("CASHOUT VOUCHER\n")
    if voucher["status"] != "issued":
        printer.text(f"VOID - {str(voucher['status']).upper()}\n")
    printer.barcode(code, "ITF", height=80, width=2, pos="BELOW", function_type="B")
    printer.set(align="center", bold=True, double_height=True, double_width=True)
    printer.text(f"{format_cents(int(voucher['amount']))}\n")
    printer.set(align="center", normal_textsize=True)
    printer.text(f"{amount_in_words(int(voucher['amount']))}\n")
    printer.set(align="left")
    for name, value in _fields(voucher, code, table=table, expiry_days=expiry_days, zone=zone):
        printer.text(f"{name}: {value}\n")
    printer.cut()
    output: bytes = printer.output
    return output


RECEIPT_TITLES = {
    "voucher_paid": "VOUCHER REDEEMED",
    "voucher_sold": "VOUCHER SOLD",
    "voucher_voided": "VOUCHER VOIDED",
    "fund": "CREDIT SOLD",
    "jackpot": "JACKPOT HAND PAY",
    "cancelled_credit": "CANCELLED CREDIT HAND PAY",
}
"""A receipt's title per kind of cage transaction."""


def _receipt_fields(transaction: dict[str, Any], zone: str) -> list[tuple[str, str]]:
    rows = [
        ("Transaction", str(transaction["id"])),
        ("Date", local_when(int(transaction["at_us"]), zone)),
        ("Cashier", str(transaction["cashier"])),
    ]
    if transaction.get("voucher"):
        rows.append(("Voucher #", masked(str(transaction["voucher"]))))
    for name, key in (
        ("Account", "account"),
        ("Terminal", "terminal"),
        ("Reason", "reason"),
        ("Approved by", "approved_by"),
    ):
        if transaction.get(key):
            rows.append((name, str(transaction[key])))
    return rows


def receipt_html(transaction: dict[str, Any], *, casino: str, zone: str = "UTC") -> str:
    """The printable receipt of a cage transaction (:func:`tablejack.store.cage.transaction`)."""
    e = html.escape
    title = RECEIPT_TITLES.get(str(transaction["kind"]), "CAGE RECEIPT")
    fields = "".join(
        f"<dt>{e(name)}</dt><dd>{e(value)}</dd>"
        for name, value in _receipt_fields(transaction, zone)
    )
    amount = int(transaction["amount"])
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>Receipt {e(str(transaction['id']))}</title><style>{STYLE}</style></head><body>"
        '<article class="ticket" data-testid="receipt">'
        f"<h1>{e(casino)}</h1><h2>CAGE RECEIPT</h2>"
        f'<p class="state" data-testid="receipt-title">{e(title)}</p>'
        f'<div class="amount" data-testid="receipt-amount">{e(format_cents(amount))}</div>'
        f'<div class="words">{e(amount_in_words(amount))}</div>'
        f"<dl>{fields}</dl></article></body></html>"
    )


def receipt_escpos(transaction: dict[str, Any], *, casino: str, zone: str = "UTC") -> bytes:
    """The receipt as ESC/POS commands for the cage's receipt printer (python-escpos)."""
    from escpos.printer import Dummy

    printer = Dummy()
    printer.set(align="center", bold=True, double_height=True, double_width=True)
    printer.text(f"{casino}\n")
    printer.set(align="center", bold=True, normal_textsize=True)
    printer.text("CAGE RECEIPT\n")
    printer.text(f"{RECEIPT_TITLES.get(str(transaction['kind']), 'CAGE RECEIPT')}\n")
    printer.set(align="center", bold=True, double_height=True, double_width=True)
    printer.text(f"{format_cents(int(transaction['amount']))}\n")
    printer.set(align="left", normal_textsize=True)
    for name, value in _receipt_fields(transaction, zone):
        printer.text(f"{name}: {value}\n")
    printer.cut()
    output: bytes = printer.output
    return output
