"""A frame that is not a protocol message is refused with a sentence naming what was wrong and
the rule, and the frame's id when it could be read (``read_client``)."""

from __future__ import annotations

import pytest

from tablejack.server.support.protocol import MalformedMessageError, WagerMessage, read_client

CASES = [
    (
        '{"type": "wager", "id": "w1", "amount": 0}',
        "w1",
        "protocol: amount",
        "A wager amount is a whole positive number of cents, not 0 (protocol: amount).",
    ),
    (
        '{"type": "wager", "id": "w1", "amount": 1e400}',
        "w1",
        "protocol: amount",
        "A wager amount is a whole positive number of cents, not inf (protocol: amount).",
    ),
    (
        '{"type": "wager", "id": "w1"}',
        "w1",
        "protocol: amount",
        "A wager message needs its amount, which is a whole positive number of cents "
        "(protocol: amount).",
    ),
    (
        '{"type": "action", "id": "a1", "verb": "double", "amount": -1}',
        "a1",
        "protocol: amount",
        "The amount of a double, insurance or EZ Bust is a whole positive number of cents "
        "(left out: the full amount), not -1 (protocol: amount).",
    ),
    (
        '{"type": "wager", "id": "w1", "amount": 3000, "spots": [1000, 1000, -1]}',
        "w1",
        "protocol: spots",
        "The spots of a multi-action wager are three whole numbers of cents, 0 for a spot not "
        "backed, not -1 (item 3) (protocol: spots).",
    ),
    (
        '{"type": "action", "id": "a1", "verb": "HIT"}',
        "a1",
        "protocol: verb",
        'A verb is 1 to 24 lower-case letters or - (hit, stand, double, …), not "HIT" '
        "(protocol: verb).",
    ),
    (
        '{"type": "wager", "id": "", "amount": 1000}',
        None,
        "protocol: id",
        'A message id is a string of 1 to 64 characters, not "" (protocol: id).',
    ),
    (
        '{"type": "hello", "protocol": 1, "token": "tok\\u0000"}',
        None,
        "text: no control characters",
        "A token may not hold control characters; U+0000 at character 4 is refused "
        "(text: no control characters).",
    ),
    (
        "{}",
        None,
        "protocol: type",
        "A message names its type: one of hello, join, position, wager, withdraw, change, "
        "action, dealer, repeat, ping (protocol: type).",
    ),
    (
        '{"type": "ping", "id": "p1", "amount": 5, "kind": "x"}',
        "p1",
        "protocol: ping",
        "A ping message has no field 'amount' (protocol: ping). 1 more problem is not listed.",
    ),
    (
        "{not json",
        None,
        "protocol: JSON",
        "A frame is one JSON object; this one is not JSON (key must be a string at line 1 "
        "column 2) (protocol: JSON).",
    ),
]


@pytest.mark.parametrize(("frame", "command_id", "rule", "message"), CASES)
def test_a_frame_that_is_not_a_protocol_message_is_refused_with_a_sentence_naming_the_rule(
    frame: str, command_id: str | None, rule: str, message: str
) -> None:
    with pytest.raises(MalformedMessageError) as refused:
        read_client(frame)
    assert (refused.value.command_id, refused.value.rule, refused.value.message) == (
        command_id,
        rule,
        message,
    )
    assert refused.value.frame() == {
        "type": "error",
        "id": command_id,
        "code": "malformed",
        "rule": rule,
        "message": message,
    }


def test_a_long_value_is_quoted_cut_short_and_a_valid_frame_is_read() -> None:
    with pytest.raises(MalformedMessageError) as refused:
        read_client('{"type": "join", "id": "j1", "table": "' + "T" * 100 + '"}')
    assert refused.value.message.endswith(
        '"TTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTT… (protocol: table).'
    )
    message = read_client('{"type": "wager", "id": "w1", "amount": 1000}')
    assert isinstance(message, WagerMessage)
    assert message.amount == 1000
