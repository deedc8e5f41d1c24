-- The claim-order key of 24 bytes (0.10, docs/proposals/claim_order_key.md,
-- src/dataplane/claimkey.c): the index of the ready children on (lane_id,
-- awa_internal.xid_lo(txid), lane_seq), the key function, and the spans a read of a
-- range of xids is cut into at the xid epochs. Windows across epochs are read by
-- t/040_claim_order_key.pl on a cluster in epoch 2; every window suite reads through
-- the key.
\i sql/fresh.inc

-- the index of each ready child: the key on xid_lo(txid), none on txid itself
SELECT count(*) FILTER (WHERE indexdef LIKE '%(lane_id, awa_internal.xid_lo(txid), lane_seq)') AS on_xid_lo,
       count(*) FILTER (WHERE indexdef LIKE '%(lane_id, txid, lane_seq)') AS on_txid
  FROM pg_indexes WHERE schemaname = 'awa' AND tablename ~ '^ready_entries_[0-9]+$';

-- xid_lo: the low 32 bits, sign bit flipped, so that int order is their unsigned order
SELECT x, awa_internal.xid_lo(x::xid8) AS key
  FROM unnest(ARRAY['0', '1', '2147483647', '2147483648', '4294967295', '4294967296',
                    '4294967301', '8589934591']) x;
SELECT awa_internal.xid_lo('12345'::xid8) = awa_internal.xid_lo(('12345'::numeric + 4294967296)::text::xid8)
       AS same_low_bits_same_key;
-- increasing within an epoch
SELECT bool_and(awa_internal.xid_lo(((e * 4294967296) + i)::text::xid8)
              < awa_internal.xid_lo(((e * 4294967296) + i + d)::text::xid8)) AS increasing
  FROM generate_series(0, 2) e, unnest(ARRAY[0::numeric, 1, 2147483646, 2147483647, 2147483648, 4294967290]) i,
       unnest(ARRAY[1::numeric, 5]) d;

-- the spans of a read of [from, to): one in an epoch; the part in from's epoch and the
-- part in to's, each ordered; the whole epochs between in one pass, not ordered
SELECT * FROM awa_internal.xid_spans('100', '200');
SELECT * FROM awa_internal.xid_spans('4294967290', '4294967300');
SELECT * FROM awa_internal.xid_spans('0', '8589934600');
SELECT * FROM awa_internal.xid_spans('4294967296', '8589934592');
SELECT count(*) AS empty FROM awa_internal.xid_spans('7', '7');

-- claims read their windows through the key: the jobs of one session (one lane), in
-- one transaction and in three, are taken in their order
SELECT count(*) FROM (SELECT awa.enqueue('cok', 'k', jsonb_build_object('i', i))
                        FROM generate_series(1, 5) i) e;
SELECT awa.enqueue('cok', 'k', '{"i": 6}') IS NOT NULL AS six;
SELECT awa.enqueue('cok', 'k', '{"i": 7}') IS NOT NULL AS seven;
SELECT array_agg((c.args ->> 'i')::int ORDER BY c.ordinality) AS claimed
  FROM awa.claim('cok', 4) WITH ORDINALITY c;
SELECT array_agg((c.args ->> 'i')::int ORDER BY c.ordinality) AS claimed
  FROM awa.claim('cok', 10) WITH ORDINALITY c;
