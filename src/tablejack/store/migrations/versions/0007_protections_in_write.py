"""PostgreSQL: the one-statement group commit (``tablejack_write_batch``) holds the player
protections (limits and self-exclusion) in the transaction that writes the wagers.

The function of migration 0005 again, with one more check between the accounts' update and the
ledger's insert: when the batch debits a ``wager`` or ``tip`` from a player who has a limits row
(``player_limits``), it locks those rows (``FOR UPDATE``, in the order of their ids, after the
accounts: one writer at a time per such player, across tables and processes), reads the
player's usage of each gaming day the batch touches from the ledger as committed now (the
function's statements each see a fresh snapshot), and raises (``TJ001``) when, for a player and
day, the usage and ALL the batch's wagers and tips (what came back to him in the batch not
counted) would pass a limit, when a wager or tip falls in a self-exclusion, or when the latest
wager or tip comes a time limit after the day's first wager. That is at least as strict as the
rule step by step (:mod:`tablejack.store.wager_limits`): a batch it refuses is written again
step by step in the statements, which refuse exactly the steps that pass a limit and name the
reason. Players with no limits row cost one index probe per wager. SQLite: nothing (the write
path's statements check every batch).

Both databases: the ledger's indexes by account become ``(account, at_us)`` (one each side, as
before), so a day's usage is read from that day's rows alone.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import importlib

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

FUNCTION = """
CREATE OR REPLACE FUNCTION tablejack_write_batch(
    fence_tables varchar[], fence_tokens bigint[],
    head_ids varchar[], head_seqs int[], head_hashes varchar[],
    new_ids varchar[], new_tables varchar[], new_numbers int[], new_kinds varchar[],
    new_games varchar[], new_opened bigint[], new_genesis varchar,
    e_round varchar[], e_seq int[], e_at bigint[], e_kind varchar[], e_actor varchar[],
    e_terminal varchar[], e_payload text[], e_prev varchar[], e_hash varchar[],
    m_id varchar[], m_expected int[], m_seq int[], m_head varchar[], m_status varchar[],
    m_closed bigint[],
    a_id varchar[], a_delta bigint[], a_kind varchar[], a_need bigint[],
    l_at bigint[], l_from varchar[], l_to varchar[], l_amount bigint[], l_kind varchar[],
    l_round varchar[], l_seq int[], l_wager int[], l_memo varchar[],
    t_table varchar[], t_kind varchar[], t_drop bigint[], t_win bigint[]
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    found int;
    start_us bigint;
BEGIN
    SELECT count(*) INTO found FROM (
        SELECT f.table_id FROM table_fences AS f
        JOIN unnest(fence_tables, fence_tokens) AS w(table_id, token)
            ON f.table_id = w.table_id AND f.token = w.token
        ORDER BY f.table_id FOR SHARE OF f
    ) AS current_fences;
    IF found <> coalesce(array_length(fence_tables, 1), 0) THEN
        RAISE EXCEPTION 'a fence is stale' USING ERRCODE = 'TJ001';
    END IF;
    SELECT count(*) INTO found FROM (
        SELECT r.id FROM rounds AS r
        JOIN unnest(head_ids, head_seqs, head_hashes) AS h(id, seq, hash)
            ON r.id = h.id AND r.last_seq = h.seq AND r.head_hash = h.hash
        WHERE r.status NOT IN ('complete', 'voided')
        ORDER BY r.id FOR UPDATE OF r
    ) AS current_heads;
    IF found <> coalesce(array_length(head_ids, 1), 0) THEN
        RAISE EXCEPTION 'a log head moved' USING ERRCODE = 'TJ001';
    END IF;
    INSERT INTO rounds (id, table_id, number, kind, game, status, opened_us, last_seq, head_hash)
        SELECT n.id, n.table_id, n.number, n.kind, n.game, 'open', n.opened, 0, new_genesis
        FROM unnest(new_ids, new_tables, new_numbers, new_kinds, new_games, new_opened)
            AS n(id, table_id, number, kind, game, opened);
    INSERT INTO events (round_id, seq, at_us, kind, actor, terminal, payload, prev_hash, hash)
        SELECT * FROM unnest(e_round, e_seq, e_at, e_kind, e_actor, e_terminal, e_payload,
            e_prev, e_hash);
    UPDATE rounds AS r SET last_seq = m.seq, head_hash = m.head,
        status = coalesce(m.status, r.status), closed_us = coalesce(m.closed, r.closed_us)
        FROM unnest(m_id, m_expected, m_seq, m_head, m_status, m_closed)
            AS m(id, expected, seq, head, status, closed)
        WHERE r.id = m.id AND r.last_seq = m.expected;
    GET DIAGNOSTICS found = ROW_COUNT;
    IF found <> coalesce(array_length(m_id, 1), 0) THEN
        RAISE EXCEPTION 'a log head moved' USING ERRCODE = 'TJ001';
    END IF;
    PERFORM 1 FROM accounts WHERE id = ANY(a_id) ORDER BY id FOR UPDATE;
    UPDATE accounts AS a SET balance = a.balance + s.delta
        FROM unnest(a_id, a_delta, a_kind, a_need) AS s(id, delta, kind, need)
        WHERE a.id = s.id AND a.kind = s.kind AND (a.kind <> 'player' OR a.balance >= s.need);
    GET DIAGNOSTICS found = ROW_COUNT;
    IF found <> coalesce(array_length(a_id, 1), 0) THEN
        RAISE EXCEPTION 'an account refused its change' USING ERRCODE = 'TJ001';
    END IF;
    -- player protections: the batch's wagers and tips of players with a limits row, checked
    -- under the lock of those rows against the usage committed before (a fresh snapshot)
    IF EXISTS (
        SELECT 1 FROM unnest(l_from, l_kind) AS x(account, kind)
        JOIN player_limits AS p ON p.account = x.account
        WHERE x.kind IN ('wager', 'tip')
    ) THEN
        PERFORM 1 FROM player_limits
            WHERE account IN (SELECT x.account FROM unnest(l_from, l_kind) AS x(account, kind)
                WHERE x.kind IN ('wager', 'tip'))
            ORDER BY account FOR UPDATE;
        start_us := coalesce((SELECT value::bigint FROM floor_settings
            WHERE key = 'gaming_day_start_hour'), 6) * 3600000000;
        SELECT count(*) INTO found FROM (
            WITH debit AS (
                SELECT x.account, (x.at - start_us) / 86400000000 AS day,
                    coalesce(sum(x.amount) FILTER (WHERE x.kind = 'wager'), 0) AS wagered,
                    sum(x.amount) AS lost,
                    min(x.at) FILTER (WHERE x.kind = 'wager') AS first_at,
                    min(x.at) AS earliest, max(x.at) AS latest
                FROM unnest(l_at, l_from, l_amount, l_kind) AS x(at, account, amount, kind)
                JOIN player_limits AS p ON p.account = x.account
                WHERE x.kind IN ('wager', 'tip')
                GROUP BY 1, 2
            ), used AS (
                SELECT d.account, d.day, o.wagered - i.refunded AS wagered,
                    o.debits - i.credits AS lost, o.first_at
                FROM debit AS d
                CROSS JOIN LATERAL (
                    SELECT coalesce(sum(e.amount) FILTER (WHERE e.kind = 'wager'), 0) AS wagered,
                        coalesce(sum(e.amount), 0) AS debits,
                        min(e.at_us) FILTER (WHERE e.kind = 'wager') AS first_at
                    FROM ledger_entries AS e WHERE e.from_account = d.account
                        AND e.at_us >= d.day * 86400000000 + start_us
                        AND e.at_us < (d.day + 1) * 86400000000 + start_us
                        AND e.kind IN ('wager', 'tip')
                ) AS o
                CROSS JOIN LATERAL (
                    SELECT coalesce(sum(e.amount) FILTER (WHERE e.kind = 'refund'), 0) AS refunded,
                        coalesce(sum(e.amount), 0) AS credits
                    FROM ledger_entries AS e WHERE e.to_account = d.account
                        AND e.at_us >= d.day * 86400000000 + start_us
                        AND e.at_us < (d.day + 1) * 86400000000 + start_us
                        AND e.kind IN ('refund', 'returned', 'winnings', 'settle')
                ) AS i
            )
            SELECT 1 FROM debit AS d JOIN used AS u ON u.account = d.account AND u.day = d.day
            JOIN player_limits AS p ON p.account = d.account
            WHERE (p.excluded_until_us IS NOT NULL AND d.earliest < p.excluded_until_us)
                OR (p.wager_limit IS NOT NULL AND d.wagered > 0
                    AND u.wagered + d.wagered > p.wager_limit)
                OR (p.loss_limit IS NOT NULL AND u.lost + d.lost > p.loss_limit)
                OR (p.time_limit_s IS NOT NULL
                    AND d.latest - least(u.first_at, d.first_at) >= p.time_limit_s * 1000000)
        ) AS refused;
        IF found > 0 THEN
            RAISE EXCEPTION 'a player protection refuses a step' USING ERRCODE = 'TJ001';
        END IF;
    END IF;
    INSERT INTO ledger_entries (at_us, from_account, to_account, amount, kind, round_id, seq,
            wager_id, memo)
        SELECT * FROM unnest(l_at, l_from, l_to, l_amount, l_kind, l_round, l_seq, l_wager,
            l_memo);
    INSERT INTO meters (table_id, wager_kind, "drop", win)
        SELECT * FROM unnest(t_table, t_kind, t_drop, t_win)
        ON CONFLICT (table_id, wager_kind) DO UPDATE
            SET "drop" = meters."drop" + excluded."drop", win = meters.win + excluded.win;
END;
$$
"""


def upgrade() -> None:
    op.drop_index("ix_ledger_entries_from_account", table_name="ledger_entries")
    op.drop_index("ix_ledger_entries_to_account", table_name="ledger_entries")
    op.create_index(
        "ix_ledger_entries_from_account_at", "ledger_entries", ["from_account", "at_us"]
    )
    op.create_index("ix_ledger_entries_to_account_at", "ledger_entries", ["to_account", "at_us"])
    if op.get_bind().dialect.name == "postgresql":
        op.execute(FUNCTION)


def downgrade() -> None:
    op.drop_index("ix_ledger_entries_from_account_at", table_name="ledger_entries")
    op.drop_index("ix_ledger_entries_to_account_at", table_name="ledger_entries")
    op.create_index("ix_ledger_entries_from_account", "ledger_entries", ["from_account"])
    op.create_index("ix_ledger_entries_to_account", "ledger_entries", ["to_account"])
    if op.get_bind().dialect.name == "postgresql":
        previous = importlib.import_module("tablejack.store.migrations.versions.0005_write_batch")
        op.execute(previous.FUNCTION)
