/*
 * awa_locks.pml -- Promela model of the awa_bgw ring lock order and of the
 * one-way columns -> ledger ring-cursor authority flip (project issue 6).
 *
 * Checked exhaustively by spin (see Makefile, README.md).
 *
 * What is modelled (README.md has the full step-to-SQL table):
 *   - NR rings (default 2: queue, lease; -DNR=3 adds claim), each with
 *     SC = 2 slots: the singleton row {r}_ring_state (compat cursor columns
 *     current_slot/generation), the slot rows {r}_ring_slots (row-lock
 *     targets and compat per-slot generation), the ledger
 *     {r}_ring_rotations, and one table lock per (ring, slot) standing for
 *     all the child partitions of that slot;
 *   - awa.rotate (0.7: both disciplines), a pre-ledger (0.6) rotator,
 *     awa.prune, awa.rescue, hot-path writers, awa.flip_ring_authority and
 *     the fence trigger reject_compat_ring_cursor_update_after_flip.
 *
 * Transaction semantics:
 *   - each SQL statement is one atomic Promela step (a few read-only
 *     statements under the same locks form one small atomic group);
 *     anything may interleave between steps;
 *   - a lock that waits is a blocking guard; a try-lock, SKIP LOCKED or
 *     lock_timeout that fails is a branch that gives up the transaction
 *     (outcome skipped/blocked) and releases everything it holds;
 *   - a transaction's writes are applied to the committed state only in
 *     its COMMIT step (what it will write is determined by its local
 *     state: the cursor it read), so uncommitted effects are invisible to
 *     every other snapshot; ROLLBACK discards them; COMMIT and ROLLBACK
 *     release every lock of the transaction in the same step;
 *   - FIRST_LOCK_WAIT: a transaction that waits for its FIRST lock holds
 *     nothing, so nobody can wait for it and nobody can observe it; its
 *     wait is modelled as not having started yet (it retries from the idle
 *     point when the lock is free).  Waits while holding a lock (0.6 and
 *     compat stamp, the flip's second and later singletons and slot rows,
 *     rescue's child lock, prune's lock_timeout wait) are real blocking
 *     guards.
 *
 * Build variants (spin -D...):
 *   WRONG_AUTHORITY_FIRST  awa.rotate reads the authority BEFORE locking the
 *                          singleton: the time-of-check bug AWA's TLA+ model
 *                          found.  spin must report a violation.
 *   NO_FENCE               negative control: no fence trigger.
 *   WRONG_FLIP_ORDER       negative control: the second flip locks the
 *                          singletons in the reverse ring order.
 *   NO_COMPAT_BACKFILL     negative control: the 0.7 compat rotation does
 *                          not reconcile the ledger.
 *   NO_DISCIPLINE_CHECK    drops the MixedFleet assertion mode == auth (with
 *                          WRONG_AUTHORITY_FIRST and NO_FENCE it shows what
 *                          the stale discipline does to the data).
 *   REACH=n                reachability witness n (see WITNESS below).
 *   NR, MAXG, N07, N06, NMAINT, NWRITER, NFLIP: bounds (defaults below).
 */

/* ------------------------------------------------------------------ */
/* Bounds                                                              */
/* ------------------------------------------------------------------ */
#ifndef NR
#define NR      2       /* rings in flip order: 0 queue, 1 lease, 2 claim */
#endif
#define SC      2       /* slots per ring (slot_count is 16/8/8 in SQL)    */
#define NS      (NR*SC) /* (ring, slot) pairs                             */
#ifndef MAXG
#define MAXG    3       /* highest generation a rotation may create      */
#endif
#ifndef N07
#define N07     2       /* concurrent awa.rotate callers                  */
#endif
#ifndef N06
#define N06     2       /* pre-ledger (0.6) rotators                      */
#endif
#ifndef NMAINT
#define NMAINT  2       /* awa.prune / awa.rescue callers                 */
#endif
#ifndef NWRITER
#define NWRITER 1       /* hot-path writers (enqueue/claim/complete)      */
#endif
#ifndef NFLIP
#define NFLIP   2       /* concurrent awa.flip_ring_authority calls       */
#endif

#if MAXG > 7
#error "MAXG must be at most 7: ledger rows are bits of a byte"
#endif

/* Reachability witnesses (vacuity checks): with -DREACH=n the assertion
 * WITNESS(n) fails when situation n is reached, so spin proves that it is
 * reachable; without REACH they are constant-true assertions.
 *   1 a ledger-discipline rotation commits (after the flip)
 *   2 a 0.7 compat rotation backfills two or more ledger rows
 *   3 the flip backfills at least one ledger row
 *   4 the fence trigger rejects a pre-ledger (0.6) rotator
 *   5 prune truncates under `ledger`      6 prune truncates under `columns`
 *   7 prune's lock_timeout fires while a hot-path lock is held
 *   8 a transaction on a later ring commits while a flip holds ring 0
 *   9 a second flip finds `ledger` and returns (idempotent)
 *  10 a hot-path writer is held back by a queued ACCESS EXCLUSIVE
 *  11 rescue commits                     12 a 0.6 rotation commits
 * and one that must NOT be reachable (make unreachable):
 *  13 lost_cas (ledger INSERT or columns CAS) or a busy private try-lock:
 *     the singleton already serialises every ring transaction */
#ifndef REACH
#define REACH 0
#endif
#define WITNESS(n) assert(REACH != (n))
#define FIRSTFLIP (2 + NWRITER + NMAINT + N06)  /* pid of the first flip */
#define IS_FLIP(pid) ((pid) >= FIRSTFLIP && (pid) < FIRSTFLIP + NFLIP)
/* a ring-x transaction commits while a flip holds ring 0's singleton */
#define WITNESS_FLIP_WAITS(x) \
	if :: (x) > 0 && IS_FLIP(sing[0]) -> WITNESS(8) :: else fi

/* Trail replay (spin -t) prints a short story of the key events; pan does
 * not execute printf. */
#define SAY_AUTH_UNLOCKED if \
	:: mode == COLUMNS -> printf("awa.rotate[%d] ring %d: reads authority, singleton NOT locked: columns\n", _pid, r) \
	:: else -> printf("awa.rotate[%d] ring %d: reads authority, singleton NOT locked: ledger\n", _pid, r) fi
#define SAY_AUTH_LOCKED if \
	:: mode == COLUMNS -> printf("awa.rotate[%d] ring %d: singleton locked, reads authority: columns\n", _pid, r) \
	:: else -> printf("awa.rotate[%d] ring %d: singleton locked, reads authority: ledger\n", _pid, r) fi

#define COLUMNS 0
#define LEDGER  1

#define ME      _pid    /* lock-holder id: init is pid 0, the rest >= 1   */
#define IDX(r,s) ((r)*SC + (s))

/* ------------------------------------------------------------------ */
/* Committed database state: what a new snapshot sees                  */
/* ------------------------------------------------------------------ */
bit   auth = COLUMNS;   /* awa.ring_cursor_authority.authority            */
short colgen[NR];       /* {r}_ring_state.generation, -1 = poisoned;
                           current_slot is colgen mod SC (or -1)          */
short stamp[NS];        /* {r}_ring_slots.generation, -1 = none/poisoned  */
byte  ledger[NR];       /* {r}_ring_rotations: bit g set = row g exists   */

/* ------------------------------------------------------------------ */
/* Locks: 0 = free, otherwise the holder's pid                         */
/* ------------------------------------------------------------------ */
byte sing[NR];  /* {r}_ring_state singleton row lock (FOR UPDATE)         */
byte priv[NR];   /* awa.private_try_xact_lock(hashtextextended(
                   'awa.queue_storage.ring_rotation:awa:' || ring, 0))   */
byte srow[NS];  /* {r}_ring_slots row lock (FOR UPDATE / UPDATE)          */
byte ae[NS];    /* ACCESS EXCLUSIVE on the children of (ring, slot)       */
byte aew[NS];   /* a queued, still waiting ACCESS EXCLUSIVE request       */
byte sh[NS];    /* number of RowExclusive/AccessShare/RowShare holders    */
byte lpo[NR];   /* owner of uncommitted {r}_ring_rotations rows           */

bit stopping;   /* set once by shutdown(): no new transaction starts      */

/* Scratch values, used only inside one atomic step and not part of the
 * state vector (`hidden`): loop indices and named derived values, so that
 * a failed assertion reads as what it checks. */
hidden byte  k, j;
hidden short lmax, cursor;

/* ------------------------------------------------------------------ */
/* Ghost state (verification only)                                     */
/* ------------------------------------------------------------------ */
byte made[NR];  /* bit g: generation g was created by a committed
                   rotation (generation 0 by the install)                */
byte ncol[NR];  /* transactions serialising ring r under `columns`      */
byte nled[NR];  /* transactions serialising ring r under `ledger`       */

/* ------------------------------------------------------------------ */
/* Derived values                                                      */
/* ------------------------------------------------------------------ */
/* highest set bit of a mask (= ledger max generation), -1 when empty */
#define HB(m)   ((m) >= 128 -> 7 : ((m) >= 64 -> 6 : ((m) >= 32 -> 5 : \
                ((m) >= 16 -> 4 : ((m) >= 8 -> 3 : ((m) >= 4 -> 2 :    \
                ((m) >= 2 -> 1 : ((m) >= 1 -> 0 : -1))))))))
#define LMAX(x)   HB(ledger[x])
#define BITS(g)   ((1 << ((g) + 1)) - 1)   /* generations 0..g; g=-1: none */
#define BIT(g)    (1 << (g))
/* the authoritative cursor generation, as awa.ring_cursor(ring) returns it */
#define CURSOR(x) (auth == LEDGER -> LMAX(x) : colgen[x])
/* next slot of a cursor generation */
#define NEXTP(x, g) IDX(x, ((g) + 1) % SC)

/* ------------------------------------------------------------------ */
/* Properties                                                          */
/* ------------------------------------------------------------------ */

/* State invariants, checked in every step that changes committed state
 * (every commit), hence in every reachable state. */
inline check_ring(x)
{
	lmax = LMAX(x);
	cursor = CURSOR(x);
	/* the ledger is contiguous 0..max: no generation missing */
	assert(ledger[x] == BITS(lmax));
	/* every generation up to the authoritative cursor was created by a
	 * committed rotation (that each was created only once is asserted in
	 * create_generation) */
	assert(made[x] == BITS(cursor));
	if
	:: auth == COLUMNS ->
		/* `columns`: the ledger max never exceeds the columns cursor */
		assert(lmax <= colgen[x]);
		/* the compat stamp of the current slot is the cursor */
		assert(stamp[IDX(x, colgen[x] % SC)] == colgen[x])
	:: else ->
		/* `ledger`: the columns and slot generations stay poisoned */
		assert(colgen[x] == -1);
		assert(stamp[IDX(x, 0)] == -1 && stamp[IDX(x, 1)] == -1)
	fi;
	lmax = 0; cursor = 0
}

inline check_all()
{
	j = 0;
	do
	:: j < NR -> check_ring(j); j++
	:: else -> break
	od;
	j = 0
}

/* MixedFleet, part 1: a transaction that starts to serialise ring x under
 * one discipline finds nobody serialising x under the other. */
inline enter_columns(x)
{
	assert(nled[x] == 0);
	ncol[x]++;
	indisc = 1
}
inline enter_ledger(x)
{
	assert(ncol[x] == 0);
	nled[x]++;
	indisc = 2
}
inline leave_discipline(x)
{
	if
	:: indisc == 1 -> ncol[x]--
	:: indisc == 2 -> nled[x]--
	:: else
	fi;
	indisc = 0
}
/* MixedFleet, part 2: a 0.7 transaction acts (reads the cursor, writes,
 * commits an advance) only under the discipline of the authority in force.
 * As the authority changes once, at the flip's commit, this is "no ring is
 * ever advanced under both disciplines in one epoch". */
#ifdef NO_DISCIPLINE_CHECK
#define DISCIPLINE_IS_CURRENT  skip
#else
#define DISCIPLINE_IS_CURRENT  assert(mode == auth)
#endif

/* No generation advanced twice: generation g of ring x is created by the
 * commit of exactly one rotation, as the successor of the cursor. */
inline create_generation(x, g)
{
	assert((made[x] & BIT(g)) == 0);
	assert(made[x] == BITS(g - 1));
	made[x] = made[x] | BIT(g)
}

/* COMMIT / ROLLBACK: release every lock this transaction holds. */
inline release_all()
{
	k = 0;
	do
	:: k < NR ->
		if :: sing[k] == ME -> sing[k] = 0 :: else fi;
		if :: priv[k] == ME -> priv[k] = 0 :: else fi;
		if :: lpo[k] == ME -> lpo[k] = 0 :: else fi;
		k++
	:: else -> break
	od;
	k = 0;
	do
	:: k < NS ->
		if :: srow[k] == ME -> srow[k] = 0 :: else fi;
		if :: ae[k] == ME -> ae[k] = 0 :: else fi;
		if :: aew[k] == ME -> aew[k] = 0 :: else fi;
		k++
	:: else -> break
	od;
	k = 0;
	if
	:: myshare > 0 -> sh[myshare - 1]--; myshare = 0
	:: else
	fi
}

/* A shared table lock (RowExclusive, AccessShare or RowShare) on the
 * children of pair p is granted while no ACCESS EXCLUSIVE is held or
 * queued there (PostgreSQL queues a new request behind a conflicting
 * waiter).  A transaction here holds at most one such lock. */
#define SHARE_FREE(p) (ae[p] == 0 && aew[p] == 0)
inline take_share(p)
{
	assert(myshare == 0);
	sh[p]++;
	myshare = (p) + 1
}
/* a row lock (FOR UPDATE or the lock an UPDATE takes) that waits */
#define ROW_FREE(l) ((l) == 0 || (l) == ME)

/* The fence trigger reject_compat_ring_cursor_update_after_flip,
 * BEFORE UPDATE OF current_slot, generation ON {r}_ring_state FOR EACH ROW:
 * under `ledger` authority a changed cursor raises SQLSTATE 55000 and the
 * transaction aborts.  The trigger reads the authority with the UPDATE's
 * own READ COMMITTED snapshot, i.e. the committed value at that moment. */
#ifdef NO_FENCE
#define FENCE_REJECTS   false
#else
#define FENCE_REJECTS   (auth == LEDGER)
#endif

/* ------------------------------------------------------------------ */
/* awa.rotate(schema, ring) -- 0.7, authority aware                    */
/* ------------------------------------------------------------------ */
proctype rotate07()
{
	byte r;          /* ring of this call                                 */
	bit  mode;       /* authority this transaction read                   */
	byte indisc;     /* discipline entered: 1 columns, 2 ledger           */
	short g;         /* cursor generation read (columns c or ledger max)  */
	byte myshare;    /* 1 + pair of the shared child lock held, 0: none   */

/* ROLLBACK (or a COMMIT that wrote nothing): skipped_busy (locked,
 * lost_cas, a busy next slot), skipped_idle, or an error */
#define ABORT07 release_all(); leave_discipline(r); \
	g = 0; mode = 0; r = 0; goto end_idle

end_idle:
	do
	:: atomic { !stopping ->
		select(r : 0 .. NR - 1);
#ifdef WRONG_AUTHORITY_FIRST
		/* BUG: SELECT authority FROM awa.ring_cursor_authority before
		 * the singleton is locked (time of check) */
		mode = auth;
		SAY_AUTH_UNLOCKED
	   };
	   atomic {
#endif
		/* SELECT 1 FROM awa.{r}_ring_state WHERE singleton
		 *   FOR UPDATE SKIP LOCKED                                      */
		if
		:: sing[r] == 0 -> sing[r] = ME
		:: else -> ABORT07                 /* skipped_busy (locked) */
		fi
#ifdef WRONG_AUTHORITY_FIRST
		;
		printf("awa.rotate[%d] ring %d: singleton locked\n", _pid, r);
		/* time of use: the singleton now serialises under the stale
		 * discipline */
		if
		:: mode == COLUMNS -> enter_columns(r)
		:: else
		fi
	   };
#else
	   };
	   /* next statement (READ COMMITTED: a new snapshot, taken with the
	    * singleton held): SELECT authority FROM awa.ring_cursor_authority */
	   atomic {
		mode = auth;
		SAY_AUTH_LOCKED;
		if
		:: mode == COLUMNS -> enter_columns(r)  /* singleton = serializer */
		:: else
		fi
	   };
#endif
	   if
	   /* ======================= ledger discipline ======================= */
	   :: atomic { mode == LEDGER ->
		/* SELECT awa.private_try_xact_lock(hashtextextended(
		 *   'awa.queue_storage.ring_rotation:awa:' || ring, 0))          */
		if
		:: priv[r] == 0 -> priv[r] = ME; enter_ledger(r)
		:: else -> WITNESS(13); ABORT07    /* skipped_busy (locked) */
		fi
	      };
	      atomic {
		/* SELECT generation FROM awa.{r}_ring_rotations
		 *   ORDER BY generation DESC LIMIT 1;
		 * busy check: EXISTS (SELECT 1 FROM <child>_<next> LIMIT 1) for
		 * every child of the next slot, and the idle gate.  Abstractly
		 * the next slot may be busy or the ring idle: skipped_busy /
		 * skipped_idle, nothing written.                                 */
		DISCIPLINE_IS_CURRENT;
		g = LMAX(r);
		if
		:: g + 1 > MAXG -> ABORT07        /* model bound: counts as busy */
		:: else
		fi;
		/* AccessShare on the next slot's children: waits behind a held
		 * or queued ACCESS EXCLUSIVE (a real wait: locks are held) */
		SHARE_FREE(NEXTP(r, g)) -> take_share(NEXTP(r, g));
		if
		:: ABORT07          /* a child is not empty, or the ring is idle */
		:: skip
		fi
	      };
	      atomic {
		/* INSERT INTO awa.{r}_ring_rotations (generation, slot)
		 *   VALUES (g+1, (g+1) % n) ON CONFLICT (generation) DO NOTHING */
		DISCIPLINE_IS_CURRENT;
		assert(lpo[r] == 0 || lpo[r] == ME);    /* one ledger writer */
		if
		:: (ledger[r] & BIT(g + 1)) != 0 ->          /* 0 rows: lost_cas */
			WITNESS(13); ABORT07
		:: else -> lpo[r] = ME
		fi
	      };
	      d_step {
		/* COMMIT -> rotated (g+1) */
		DISCIPLINE_IS_CURRENT;
		WITNESS(1);
		WITNESS_FLIP_WAITS(r);
		create_generation(r, g + 1);
		ledger[r] = ledger[r] | BIT(g + 1);
		printf("awa.rotate[%d] ring %d: COMMIT rotated to %d (ledger append)\n", _pid, r, g + 1);
		check_all();
		release_all();
		leave_discipline(r);
		g = 0; mode = 0; r = 0
	      }
	   /* ================ columns discipline (0.7 compat) ================ */
	   :: atomic { mode == COLUMNS ->
		/* SELECT current_slot, generation FROM awa.{r}_ring_state;
		 * busy check of the next slot, as above                         */
		DISCIPLINE_IS_CURRENT;
		g = colgen[r];
		if
		:: g + 1 > MAXG -> ABORT07        /* model bound: counts as busy */
		:: else
		fi;
		/* AccessShare on the next slot's children: waits behind a held
		 * or queued ACCESS EXCLUSIVE (a real wait: locks are held) */
		SHARE_FREE(NEXTP(r, g)) -> take_share(NEXTP(r, g));
		if
		:: ABORT07          /* a child is not empty, or the ring is idle */
		:: skip
		fi
	      };
	      atomic {
		/* UPDATE awa.{r}_ring_state SET current_slot = (c+1) % n,
		 *   generation = c+1 WHERE singleton AND generation = c
		 * (row already locked by us; the fence trigger runs first)      */
		DISCIPLINE_IS_CURRENT;
		if
		:: FENCE_REJECTS ->                /* ERROR 55000: rolled back */
			printf("awa.rotate[%d] ring %d: fence trigger: ERROR 55000\n", _pid, r);
			ABORT07
		:: colgen[r] != g ->               /* 0 rows: lost_cas */
			WITNESS(13); ABORT07
		:: else
		fi
	      };
	      /* UPDATE awa.{r}_ring_slots SET generation = c+1
	       *   WHERE slot = (c+1) % n                  (row lock: waits) */
	      atomic { ROW_FREE(srow[NEXTP(r, g)]) -> srow[NEXTP(r, g)] = ME };
#ifndef NO_COMPAT_BACKFILL
	      atomic {
		/* INSERT INTO awa.{r}_ring_rotations (generation, slot)
		 *   SELECT g, g % n FROM generate_series(COALESCE((SELECT
		 *     max(generation) FROM awa.{r}_ring_rotations), -1) + 1, c+1)
		 *   ON CONFLICT (generation) DO NOTHING
		 * (the rows become visible at COMMIT)                           */
		assert(lpo[r] == 0 || lpo[r] == ME);
		lmax = LMAX(r);
		assert(lmax <= g + 1);
		if :: g + 1 - lmax >= 2 -> WITNESS(2) :: else fi;
		lmax = 0;
		lpo[r] = ME
	      };
#endif
	      d_step {
		/* COMMIT -> rotated (c+1) */
		DISCIPLINE_IS_CURRENT;
		WITNESS_FLIP_WAITS(r);
		create_generation(r, g + 1);
		colgen[r] = g + 1;
		stamp[NEXTP(r, g)] = g + 1;
		printf("awa.rotate[%d] ring %d: COMMIT rotated to %d (columns CAS + backfill)\n", _pid, r, g + 1);
#ifndef NO_COMPAT_BACKFILL
		/* the backfilled rows max+1 .. c+1 (the ledger cannot have changed
		 * since the INSERT: we own its uncommitted rows, lpo) */
		ledger[r] = ledger[r] | BITS(g + 1);
#endif
		/* at the commit of every 0.7 compat rotation the ledger max
		 * equals the columns cursor */
		lmax = LMAX(r);
		assert(lmax == colgen[r]);
		lmax = 0;
		check_all();
		release_all();
		leave_discipline(r);
		g = 0; mode = 0; r = 0
	      }
	   fi
	od
}

/* ------------------------------------------------------------------ */
/* Pre-ledger (0.6) rotator: knows nothing of the ledger or authority  */
/* ------------------------------------------------------------------ */
proctype rotate06()
{
	byte r;
	byte indisc;
	short g;
	byte myshare;

#define ABORT06 release_all(); leave_discipline(r); \
	g = 0; r = 0; goto end_idle

end_idle:
	do
	:: atomic { !stopping ->
		select(r : 0 .. NR - 1);
		/* SELECT current_slot, generation FROM {r}_ring_state
		 *   WHERE singleton FOR UPDATE                    (waits)       */
		if
		:: sing[r] == 0 -> sing[r] = ME; enter_columns(r)
		:: else -> r = 0; goto end_idle   /* waits: see FIRST_LOCK_WAIT */
		fi
	   };
	   atomic {
		/* the row as locked (READ COMMITTED re-reads the newest
		 * version after a wait); 0.6 busy/idle check of the next slot */
		g = colgen[r];
		if
		:: g + 1 > MAXG -> ABORT06        /* model bound: counts as busy */
		:: else
		fi;
		/* AccessShare on the next slot's children: waits behind a held
		 * or queued ACCESS EXCLUSIVE (a real wait: locks are held) */
		SHARE_FREE(NEXTP(r, g)) -> take_share(NEXTP(r, g));
		if
		:: ABORT06          /* a child is not empty, or the ring is idle */
		:: skip
		fi
	   };
	   atomic {
		/* UPDATE {r}_ring_state SET current_slot = (c+1) % n,
		 *   generation = c+1 WHERE singleton
		 * -> reject_compat_ring_cursor_update_after_flip                */
		printf("0.6 rotator[%d] ring %d: UPDATE columns generation %d -> %d\n", _pid, r, g, g + 1);
		if
		:: FENCE_REJECTS ->                /* ERROR 55000: rolled back */
			printf("0.6 rotator[%d] ring %d: fence trigger: ERROR 55000\n", _pid, r);
			WITNESS(4); ABORT06
		:: else
		fi
	   };
	   /* UPDATE {r}_ring_slots SET generation = c+1 WHERE slot = (c+1) % n */
	   atomic { ROW_FREE(srow[NEXTP(r, g)]) -> srow[NEXTP(r, g)] = ME };
	   d_step {
		/* COMMIT: once the flip has committed, no pre-ledger advance
		 * of the columns succeeds */
		printf("0.6 rotator[%d] ring %d: COMMIT\n", _pid, r);
		assert(auth == COLUMNS);
		WITNESS(12);
		WITNESS_FLIP_WAITS(r);
		create_generation(r, g + 1);
		colgen[r] = g + 1;
		stamp[NEXTP(r, g)] = g + 1;
		check_all();
		release_all();
		leave_discipline(r);
		g = 0; r = 0
	   }
	od
}

/* ------------------------------------------------------------------ */
/* awa.prune / awa.rescue helpers                                      */
/* ------------------------------------------------------------------ */
#define ABORTM release_all(); leave_discipline(r); \
	mode = 0; rescue = 0; cur = 0; p = 0; r = 0; goto end_idle
/* The cursor (awa.ring_cursor), the oldest sealed slot, then
 * SELECT slot FROM awa.{r}_ring_slots WHERE slot = $1 FOR UPDATE SKIP LOCKED */
inline oldest_sealed_slot()
{
	DISCIPLINE_IS_CURRENT;
	cur = CURSOR(r);
	if
	:: cur < SC - 1 -> ABORTM          /* noop: nothing sealed yet */
	:: else -> p = NEXTP(r, cur)
	fi;
	if
	:: srow[p] == 0 -> srow[p] = ME
	:: else -> ABORTM                  /* blocked */
	fi
}
/* COMMIT: prune and rescue never change a cursor, and the cursor cannot
 * move under their serializer */
#define COMMITM DISCIPLINE_IS_CURRENT; assert(CURSOR(r) == cur); \
	check_all(); release_all(); leave_discipline(r); \
	mode = 0; rescue = 0; cur = 0; p = 0; r = 0

/* ------------------------------------------------------------------ */
/* awa.prune(schema, ring) and awa.rescue(schema): the same lock order */
/* ------------------------------------------------------------------ */
proctype maint()
{
	byte r;
	bit  mode;
	bit  rescue;     /* this call is awa.rescue, not awa.prune             */
	byte indisc;
	short cur;       /* cursor generation read                            */
	byte p;          /* pair (ring, slot) of the oldest sealed slot        */
	byte myshare;

end_idle:
	do
	:: atomic { !stopping ->
		select(r : 0 .. NR - 1);
		if :: rescue = 0 :: rescue = 1 fi;
		/* SELECT 1 FROM awa.{r}_ring_state WHERE singleton
		 *   FOR UPDATE SKIP LOCKED                                      */
		if
		:: sing[r] == 0 -> sing[r] = ME
		:: else -> ABORTM                  /* blocked (lock busy) */
		fi
	   };
	   atomic {
		/* SELECT authority FROM awa.ring_cursor_authority */
		mode = auth;
		if
		:: mode == COLUMNS -> enter_columns(r)   /* compat prune */
		:: else
		fi
	   };
	   if
	   :: atomic { mode == LEDGER ->
		/* awa.private_try_xact_lock(hashtextextended(
		 *   'awa.queue_storage.ring_rotation:awa:' || ring, 0))          */
		if
		:: priv[r] == 0 -> priv[r] = ME; enter_ledger(r)
		:: else -> WITNESS(13); ABORTM     /* blocked */
		fi
	      };
	      atomic { oldest_sealed_slot() }
	   :: atomic { mode == COLUMNS -> oldest_sealed_slot() }
	   fi;
	   if
	   :: atomic { rescue ->
		/* rescue: claim rows FOR UPDATE SKIP LOCKED in that slot's
		 * children (RowShare; waits behind ACCESS EXCLUSIVE) */
		SHARE_FREE(p) -> take_share(p)
	      };
	      d_step {
		/* ... append closures ...; COMMIT */
		WITNESS(11);
		WITNESS_FLIP_WAITS(r);
		COMMITM
	      }
	   :: atomic { !rescue ->
		/* SET LOCAL lock_timeout = awa_bgw.prune_lock_timeout;
		 * LOCK TABLE <children of the slot> IN ACCESS EXCLUSIVE MODE:
		 * granted at once, or queued */
		if
		:: ae[p] == 0 && sh[p] == 0 -> ae[p] = ME
		:: else -> aew[p] = ME
		fi
	      };
	      do
	      :: atomic { aew[p] == ME ->             /* 55P03 -> blocked */
			if :: sh[p] > 0 -> WITNESS(7) :: else fi;
			ABORTM
	         }
	      :: atomic { aew[p] == ME && ae[p] == 0 && sh[p] == 0 ->
			ae[p] = ME; aew[p] = 0           /* granted after waiting */
	         }
	      :: d_step { ae[p] == ME ->
		/* TRUNCATE <children of the slot> -- never the current slot;
		 * COMMIT -> pruned */
		assert(p != IDX(r, cur % SC));
		if :: mode == LEDGER -> WITNESS(5) :: else -> WITNESS(6) fi;
		COMMITM
	         };
		 break
	      od
	   fi
	od
}

/* ------------------------------------------------------------------ */
/* Hot paths: enqueue / claim / complete / heartbeat                   */
/* ------------------------------------------------------------------ */
proctype writer()
{
	byte p;
	byte myshare;

end_idle:
	do
	:: atomic { !stopping ->
		/* the one child partition the statement touches: any ring, any
		 * slot (claim and complete also touch sealed slots); it takes
		 * RowExclusive / AccessShare on that child only, and waits
		 * behind a held or queued ACCESS EXCLUSIVE of prune             */
		select(p : 0 .. NS - 1);
		if
		:: SHARE_FREE(p) -> take_share(p)
		:: else ->                        /* waits: see FIRST_LOCK_WAIT */
			if :: aew[p] != 0 -> WITNESS(10) :: else fi;
			p = 0; goto end_idle
		fi
	   };
	   /* INSERT / SELECT ...; COMMIT */
	   d_step { release_all(); p = 0 }
	od
}

/* ------------------------------------------------------------------ */
/* awa.flip_ring_authority(schema, force => true)                      */
/* ------------------------------------------------------------------ */
proctype flip(bit reversed)
{
	byte x;          /* ring, in locking order                             */
	byte q;          /* slot                                               */
	byte fc[NR];     /* final compat cursor of each ring                   */
	byte myshare;

#ifdef WRONG_FLIP_ORDER
#define FLIPRING(i) (reversed -> NR - 1 - (i) : (i))
#else
#define FLIPRING(i) (i)
#endif

	/* SELECT 1 FROM awa.queue_ring_state WHERE singleton FOR UPDATE;
	 * the same for lease_ring_state, then claim_ring_state (waits) */
end_start:
	atomic { !stopping -> sing[FLIPRING(0)] == 0 -> sing[FLIPRING(0)] = ME; x = 1;
		printf("flip[%d]: locked singleton of ring %d\n", _pid, FLIPRING(0));
		if :: x == NR -> x = 0; goto locked :: else fi };
	do
	:: atomic { sing[FLIPRING(x)] == 0 -> sing[FLIPRING(x)] = ME;
		printf("flip[%d]: locked singleton of ring %d\n", _pid, FLIPRING(x));
		x++;
		if :: x == NR -> x = 0; goto locked :: else fi }
	od;
	/* SELECT authority FROM awa.ring_cursor_authority WHERE singleton */
locked:
	if
	:: d_step { auth == LEDGER ->
		/* already 'ledger': COMMIT, return 'ledger' (idempotent) */
		WITNESS(9);
		printf("flip[%d]: already ledger, returns (idempotent)\n", _pid);
		release_all()
	   }
	:: atomic { auth == COLUMNS ->
		/* (force => true: the fleet check is skipped) */
		x = 0
	   };
		do
		:: atomic { x < NR ->
			/* ring x: read current_slot, generation, slot_count;
			 * validate; ledger max not ahead; backfill max+1 ..
			 * generation (visible at COMMIT); re-read and verify */
			assert(colgen[x] >= 0);                  /* invalid cursor */
			lmax = LMAX(x);
			assert(lmax <= colgen[x]);               /* ledger ahead   */
			if :: lmax < colgen[x] -> WITNESS(3) :: else fi;
			fc[x] = colgen[x];
			assert(lpo[x] == 0);                     /* one ledger writer */
			lpo[x] = ME;
			lmax = HB(ledger[x] | BITS(fc[x]));
			assert(lmax == fc[x]);                   /* does not match */
			lmax = 0;
			x++;
			if :: x == NR -> x = 0; goto poison :: else fi
		   }
		od;
		/* poison: UPDATE {r}_ring_state SET current_slot = -1,
		 * generation = -1 (the trigger lets it pass: the authority is
		 * still columns); UPDATE {r}_ring_slots SET generation = -1
		 * (row locks on every slot row, one after the other, waiting) */
poison:
		do
		:: atomic { x < NR && ROW_FREE(srow[IDX(x, q)]) ->
			assert(auth == COLUMNS);
			srow[IDX(x, q)] = ME;
			q++;
			if :: q == SC -> q = 0; x++ :: else fi
		   }
		:: atomic { x == NR ->
			/* UPDATE awa.ring_cursor_authority SET authority =
			 * 'ledger', flipped_at = now(); COMMIT: all of it
			 * becomes visible at once, the fence is live from here */
			x = 0;
			do
			:: x < NR ->
				assert(sing[x] == ME);
				ledger[x] = ledger[x] | BITS(fc[x]);
				/* the ledger equals the final compat cursor, with
				 * no generation missing */
				assert(ledger[x] == BITS(fc[x]));
				assert(made[x] == BITS(fc[x]));
				colgen[x] = -1;
				stamp[IDX(x, 0)] = -1;
				stamp[IDX(x, 1)] = -1;
				fc[x] = 0;
				x++
			:: else -> break
			od;
			auth = LEDGER;
			printf("flip[%d]: COMMIT, authority = ledger (columns poisoned, fence live)\n", _pid);
			check_all();
			release_all();
			x = 0;
			break
		   }
		od
	fi
}

/* Sets `stopping` at an arbitrary moment: from then on no transaction
 * starts, the running ones finish, and every process parks at an end
 * label.  Transactions waiting on each other for ever therefore end up in
 * a state with no move in which some process is not at an end label,
 * which spin reports as an invalid end state, even while other processes
 * could have looped on. */
proctype shutdown()
{
	stopping = 1
}

init
{
	byte i;
	atomic {
		/* a 0.6 schema at genesis just upgraded to 0.7 (expand):
		 * authority 'columns', cursor (0, 0), slot 0 stamped 0, ledger
		 * seeded with generation 0 */
		i = 0;
		do
		:: i < NR ->
			colgen[i] = 0;
			ledger[i] = BIT(0);
			made[i] = BIT(0);
			stamp[IDX(i, 0)] = 0;
			stamp[IDX(i, 1)] = -1;
			i++
		:: else -> break
		od;
		/* Creation order = pid order.  pan tries the highest pid first;
		 * shutdown comes first (pid 1) so that the search does not begin
		 * every dive by stopping the system, and awa.rotate last, so a
		 * violation is found (and its trail written) within a few
		 * hundred states.  The order changes what partial-order
		 * reduction keeps, not what is checked. */
		run shutdown();
		i = 0;
		do :: i < NWRITER -> run writer(); i++ :: else -> break od;
		i = 0;
		do :: i < NMAINT -> run maint(); i++ :: else -> break od;
		i = 0;
		do :: i < N06 -> run rotate06(); i++ :: else -> break od;
		i = 0;
		do :: i < NFLIP -> run flip(i % 2); i++ :: else -> break od;
		i = 0;
		do :: i < N07 -> run rotate07(); i++ :: else -> break od;
		i = 0
	}
}
