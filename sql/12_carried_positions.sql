-- A lane's position and the receipts carried forward (docs/storage.md A.4, B.5): an
-- open receipt carried out of the oldest claim slot lands in the current slot, newer
-- than the lane's real position in a slot between them. Read from the newest slot
-- first, it must not pass for the position: the jobs claimed after it would look
-- unclaimed and be handed out twice. On 0.9 (windows) and 0.8 (lane order).
\i sql/fresh.inc
\i sql/carried_scenario.inc
SELECT p.lane_seq = (SELECT lane_seq FROM awa.lease_claims WHERE kind = 'c') AS position_is_c
  FROM awa_internal.lane_window(:cf_lane) p;
-- the carried copy of A lost the window it had (it is not the position)
SELECT kind, claim_slot, win_hi IS NOT NULL AS has_window FROM awa.lease_claims ORDER BY kind;

DROP EXTENSION awa_bgw;
CREATE EXTENSION awa_bgw VERSION '0.8';
\i sql/carried_scenario.inc
SELECT p.lane_seq = (SELECT lane_seq FROM awa.lease_claims WHERE kind = 'c') AS position_is_c
  FROM awa.lane_position(:cf_lane) p;

DROP EXTENSION awa_bgw;
CREATE EXTENSION awa_bgw;
