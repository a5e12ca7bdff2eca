"""PostgreSQL: a group commit of play steps in one statement (``tablejack_write_batch``).

The function does in one round trip what the write path's statements do one after the other:
it share-locks the fence rows and checks each token, locks the head rows of the logs it
appends to and checks each is where the writer expects it (sequence number and hash, not
closed), creates the new rounds, inserts the events, moves the heads, locks and updates the
accounts (a player's balance never below what the steps need), inserts the ledger entries and
adds to the meters: the locks in the order of the slow path (fences, heads, accounts, meters,
each by id), the database's triggers and constraints as for any insert. Any check that fails
raises (SQLSTATE ``TJ001``) and the statement writes nothing; the writer then writes the steps
again one by one in the slow path, which names the reason. SQLite: nothing (one writer, no
round trips).

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision = "0004"
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
    if op.get_bind().dialect.name == "postgresql":
        op.execute(FUNCTION)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS tablejack_write_batch")
