/*-------------------------------------------------------------------------
 *
 * queuepolicy.c
 *	  Per-queue grants, pauses, running and rate limits on the hot paths
 *	  (docs/operations.md, "Roles and the trust model"; docs/usage.md,
 *	  "Running limits"): a backend's cache of each queue's policy, read from
 *	  awa.queue_privileges, awa.queue_pauses and awa_internal.queue_limits,
 *	  and the checks the API makes with it.
 *
 * A queue's entry holds its grants (role, privilege bits), whether it is
 * paused, and its limits: max_running, and rate, rate_per and burst (0: none;
 * the counts and the token bucket are src/dataplane/limits.c's).
 * A queue with no grants is open to every role that may call the API; one
 * with grants only to superusers, roles with the privileges of the
 * extension's owner, and roles with the privileges of a grantee
 * (has_privs_of_role: direct grants and inherited membership). The role
 * checked is the session's current role (GetOuterUserId: the login role or
 * the one SET ROLE chose), not the owner of the SECURITY DEFINER function
 * that runs the check.
 *
 * Every change to any of the tables fires awa.queue_policy_changed, a statement
 * trigger that sends a relcache invalidation of the table at commit; the
 * relcache callback of src/rel/relcache.c passes it to this file, which
 * listens (awa_relcache_listen), and the next lookup drops every entry. Each
 * lookup first reads pending invalidations, so a change is seen by every call
 * that starts after its COMMIT returned. A paused entry is read again at each
 * claim (a resume must be seen by the claimer its commit wakes, which may run
 * before the invalidation is sent).
 *
 * src/dataplane/queuepolicy.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "src/dataplane/checks.h"
#include "src/dataplane/queuepolicy.h"
#include "src/rel/relcache.h"
#include "src/rel/scan.h"

PG_FUNCTION_INFO_V1(awa_queue_allowed);
PG_FUNCTION_INFO_V1(awa_require_queue_privilege);
PG_FUNCTION_INFO_V1(awa_queue_policy_changed);

/* a queue name: at most 200 characters of at most 4 bytes, and its NUL */
#define QP_KEY_LEN		808
/* more entries than this (claims of many names): the cache starts again */
#define QP_MAX_ENTRIES	1024

typedef struct QueueGrant
{
	Oid			role;
	int			privs;			/* AWA_QUEUE_ENQUEUE | ... */
} QueueGrant;

typedef struct QueuePolicy
{
	char		queue[QP_KEY_LEN];
	bool		paused;
	AwaQueueLimits limits;		/* 0: none */
	Oid			owner;			/* the extension's owner (of the grants table) */
	int			ngrants;		/* 0: open to every role that may call the API */
	QueueGrant *grants;			/* in policy_cxt */
} QueuePolicy;

static HTAB *policies = NULL;
static MemoryContext policy_cxt = NULL;
static bool policies_stale = false;
static Oid	grants_relid = InvalidOid;
static Oid	pauses_relid = InvalidOid;
static Oid	limits_relid = InvalidOid;

/*
 * From src/rel/relcache.c's callback (awa_relcache_listen): a change to a
 * policy table (or a reset) makes every entry stale. They are dropped at the
 * next lookup, never under a check that may be using one.
 */
static void
queue_policy_invalidate(Oid relid)
{
	if (!OidIsValid(relid) || relid == grants_relid || relid == pauses_relid ||
		relid == limits_relid)
		policies_stale = true;
}

static void
forget_policies(void)
{
	if (policy_cxt != NULL)
		MemoryContextReset(policy_cxt);
	policies = NULL;
	policies_stale = false;
}

static HTAB *
policy_cache(void)
{
	HASHCTL		ctl;

	if (policy_cxt == NULL)
	{
		/* before the first entry is read */
		awa_relcache_listen(queue_policy_invalidate);
		policy_cxt = AllocSetContextCreate(CacheMemoryContext, "awa_bgw queue policies",
										   ALLOCSET_SMALL_SIZES);
	}
	if (policies == NULL)
	{
		ctl.keysize = QP_KEY_LEN;
		ctl.entrysize = sizeof(QueuePolicy);
		ctl.hcxt = policy_cxt;
		policies = hash_create("awa_bgw queue policies", 64, &ctl,
							   HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	}
	return policies;
}

/*
 * The rows of one policy table for the queue, a fresh read after the table's
 * lock (so after the invalidations that lock read): at SERIALIZABLE it takes
 * no predicate lock, so an operator's grant or pause in a serializable
 * transaction adds no edge to an enqueuer's (src/rel/scan.h). NIL when the
 * table does not exist (an older schema: no policy).
 */
static List *
policy_rows(Oid nsp, const char *table, const char *queue, TupleDesc *desc, Oid *owner,
			Oid *relid)
{
	Oid			oid = awa_relid(nsp, table);
	Relation	rel;
	AwaFreshRead fresh;
	TableScanDesc scan;
	TupleTableSlot *slot;
	ScanKeyData key;
	List	   *rows = NIL;

	*relid = oid;
	if (!OidIsValid(oid))
		return NIL;
	rel = table_open(oid, AccessShareLock);
	*owner = rel->rd_rel->relowner;
	*desc = CreateTupleDescCopy(RelationGetDescr(rel));
	ScanKeyInit(&key, awa_column_number(rel, "queue"), BTEqualStrategyNumber, F_TEXTEQ,
				CStringGetTextDatum(queue));
	awa_fresh_read_begin(&fresh);
	scan = table_beginscan(rel, fresh.snapshot, 1, &key);
	slot = table_slot_create(rel, NULL);
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
		if (awa_fresh_row_visible(&fresh, rel, slot))
			rows = lappend(rows, ExecCopySlotHeapTuple(slot));
	ExecDropSingleTupleTableSlot(slot);
	table_endscan(scan);
	awa_fresh_read_end(&fresh);
	table_close(rel, NoLock);
	return rows;
}

/* whether the queue is paused now (read, not cached) */
static bool
read_paused(const char *queue)
{
	TupleDesc	desc;
	Oid			owner;

	return policy_rows(awa_namespace(), "queue_pauses", queue, &desc, &owner,
					   &pauses_relid) != NIL;
}

/* the queue's grants, read (into grants, in the current context) */
static int
read_grants(const char *queue, QueueGrant **grants, Oid *owner)
{
	TupleDesc	desc = NULL;
	List	   *rows = policy_rows(awa_namespace(), "queue_privileges", queue, &desc, owner,
								   &grants_relid);
	ListCell   *lc;
	int			n = 0;

	*grants = palloc(Max(list_length(rows), 1) * sizeof(QueueGrant));
	foreach(lc, rows)
	{
		HeapTuple	tup = lfirst(lc);
		bool		isnull;
		int			a_role = -1;
		int			a_privs = -1;
		int			i;

		for (i = 0; i < desc->natts; i++)
		{
			if (strcmp(NameStr(TupleDescAttr(desc, i)->attname), "grantee") == 0)
				a_role = i + 1;
			else if (strcmp(NameStr(TupleDescAttr(desc, i)->attname), "privileges") == 0)
				a_privs = i + 1;
		}
		if (a_role < 0 || a_privs < 0)
			elog(ERROR, "awa.queue_privileges has no grantee or privileges column");
		(*grants)[n].role = DatumGetObjectId(heap_getattr(tup, a_role, desc, &isnull));
		(*grants)[n].privs = DatumGetInt16(heap_getattr(tup, a_privs, desc, &isnull));
		n++;
	}
	return n;
}

/* the value of the named column of tup, NULL when it is, or when there is none */
static bool
row_value(HeapTuple tup, TupleDesc desc, const char *name, Datum *value)
{
	bool		isnull = true;
	int			i;

	*value = (Datum) 0;
	for (i = 0; i < desc->natts; i++)
		if (strcmp(NameStr(TupleDescAttr(desc, i)->attname), name) == 0)
			*value = heap_getattr(tup, i + 1, desc, &isnull);
	return !isnull;
}

/*
 * The queue's limits, read (zeros: none, or an older schema without the
 * table awa_internal.queue_limits). A rate is kept only with a rate_per and
 * a burst in the bounds the table's checks hold it to.
 */
static void
read_limits(const char *queue, AwaQueueLimits *lim)
{
	TupleDesc	desc = NULL;
	Oid			owner;
	List	   *rows;
	HeapTuple	tup;
	Datum		d = (Datum) 0;

	memset(lim, 0, sizeof(*lim));
	if (awa_internal_namespace() == awa_namespace())
		return;
	rows = policy_rows(awa_internal_namespace(), "queue_limits", queue, &desc, &owner,
					   &limits_relid);
	if (rows == NIL)
		return;
	tup = linitial(rows);
	if (row_value(tup, desc, "max_running", &d))
		lim->max_running = DatumGetInt32(d);
	if (row_value(tup, desc, "rate", &d))
		lim->rate = DatumGetInt32(d);
	if (row_value(tup, desc, "rate_per", &d))
		lim->per_us = awa_interval_us(DatumGetIntervalP(d));
	if (row_value(tup, desc, "burst", &d))
		lim->burst = DatumGetInt32(d);
	if (lim->rate < 1 || lim->per_us < 1000 || lim->per_us > USECS_PER_DAY ||
		lim->burst < 1 || lim->burst > 1000000)
		lim->rate = lim->per_us = lim->burst = 0;
}

/* The queue's policy: cached, or read and cached. */
static QueuePolicy *
queue_policy(text *queue)
{
	char		key[QP_KEY_LEN];
	QueuePolicy *e;
	QueueGrant *grants;
	Oid			owner = InvalidOid;
	bool		paused;
	AwaQueueLimits limits;
	int			n;
	bool		found;

	text_to_cstring_buffer(queue, key, sizeof(key));
	AcceptInvalidationMessages();
	if (policies_stale ||
		(policies != NULL && hash_get_num_entries(policies) >= QP_MAX_ENTRIES))
		forget_policies();
	e = hash_search(policy_cache(), key, HASH_FIND, NULL);
	if (e != NULL)
		return e;
	n = read_grants(key, &grants, &owner);
	paused = read_paused(key);
	read_limits(key, &limits);
	/* what the reads' locks invalidated predates what they read */
	if (policies_stale)
		forget_policies();
	e = hash_search(policy_cache(), key, HASH_ENTER, &found);
	e->paused = paused;
	e->limits = limits;
	e->owner = owner;
	e->ngrants = n;
	e->grants = MemoryContextAlloc(policy_cxt, Max(n, 1) * sizeof(QueueGrant));
	memcpy(e->grants, grants, n * sizeof(QueueGrant));
	return e;
}

/* whether the calling role may use the queue for priv */
static bool
policy_allows(QueuePolicy *p, int priv)
{
	Oid			role;
	int			i;

	if (p->ngrants == 0)
		return true;
	role = GetOuterUserId();
	if (superuser_arg(role) || has_privs_of_role(role, p->owner))
		return true;
	for (i = 0; i < p->ngrants; i++)
		if ((p->grants[i].privs & priv) != 0 && has_privs_of_role(role, p->grants[i].role))
			return true;
	return false;
}

static const char *
privilege_name(int priv)
{
	return priv == AWA_QUEUE_ENQUEUE ? "enqueue" : priv == AWA_QUEUE_CLAIM ? "claim" : "manage";
}

/* Whether the calling role may use the queue for priv (AWA_QUEUE_*). */
bool
awa_queue_allowed_for(text *queue, int priv)
{
	return policy_allows(queue_policy(queue), priv);
}

/* The same, as an error (42501) when it may not. */
void
awa_queue_require(text *queue, int priv)
{
	char	   *q;
	const char *name;

	if (awa_queue_allowed_for(queue, priv))
		return;
	q = text_to_cstring(queue);
	name = privilege_name(priv);
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied to %s queue \"%s\"",
					priv == AWA_QUEUE_ENQUEUE ? "enqueue into" :
					priv == AWA_QUEUE_CLAIM ? "claim from" : "manage", q),
			 errdetail("Queue \"%s\" has grants, and role \"%s\" has no %s privilege on it.",
					   q, GetUserNameFromId(GetOuterUserId(), true) ?
					   GetUserNameFromId(GetOuterUserId(), true) : "?", name),
			 errhint("A queue administrator can grant it: SELECT awa.grant_queue('%s', "
					 "'<role>', '{%s}').", q, name)));
}

/* Whether the queue's claims are paused (a paused entry is read again). */
bool
awa_queue_paused(text *queue)
{
	QueuePolicy *p = queue_policy(queue);

	return p->paused && read_paused(p->queue);
}

/*
 * The claim's view of the queue, in one cache lookup: whether it is paused
 * (as awa_queue_paused) and its limits (zeros: none).
 */
bool
awa_queue_claim_policy(text *queue, AwaQueueLimits *limits)
{
	QueuePolicy *p = queue_policy(queue);

	*limits = p->limits;
	return p->paused && read_paused(p->queue);
}

/*
 * The queue's max_running (0: none), from the cache: the close paths, which
 * checked the queue's claim privilege in this command (and so read the
 * pending invalidations) just before, find its entry without reading them
 * again.
 */
int32
awa_queue_max_running(text *queue)
{
	char		key[QP_KEY_LEN];
	QueuePolicy *e;

	if (policies != NULL && !policies_stale)
	{
		text_to_cstring_buffer(queue, key, sizeof(key));
		e = hash_search(policies, key, HASH_FIND, NULL);
		if (e != NULL)
			return e->limits.max_running;
	}
	return queue_policy(queue)->limits.max_running;
}

static int
privilege_bit(text *privilege)
{
	char	   *s = text_to_cstring(privilege);

	if (strcmp(s, "enqueue") == 0)
		return AWA_QUEUE_ENQUEUE;
	if (strcmp(s, "claim") == 0)
		return AWA_QUEUE_CLAIM;
	if (strcmp(s, "manage") == 0)
		return AWA_QUEUE_MANAGE;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown queue privilege \"%s\"", s),
			 errhint("The queue privileges are enqueue, claim and manage.")));
	return 0;					/* keep compiler quiet */
}

/* awa.queue_allowed(queue text, privilege text) RETURNS boolean (STRICT) */
Datum
awa_queue_allowed(PG_FUNCTION_ARGS)
{
	int			priv = privilege_bit(PG_GETARG_TEXT_PP(1));

	awa_check_name("queue", PG_GETARG_TEXT_PP(0));
	PG_RETURN_BOOL(awa_queue_allowed_for(PG_GETARG_TEXT_PP(0), priv));
}

/* awa.require_queue_privilege(queue text, privilege text) RETURNS void */
Datum
awa_require_queue_privilege(PG_FUNCTION_ARGS)
{
	int			priv;

	awa_check_name("queue", PG_ARGISNULL(0) ? NULL : PG_GETARG_TEXT_PP(0));
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("invalid queue privilege NULL"),
				 errhint("The queue privileges are enqueue, claim and manage.")));
	priv = privilege_bit(PG_GETARG_TEXT_PP(1));
	awa_queue_require(PG_GETARG_TEXT_PP(0), priv);
	PG_RETURN_VOID();
}

/*
 * awa_internal.queue_policy_changed(): the statement trigger of
 * awa.queue_privileges, awa.queue_pauses and awa_internal.queue_limits. The
 * relcache invalidation it asks for is sent when the transaction commits (and
 * seen at once by this backend's next command).
 */
Datum
awa_queue_policy_changed(PG_FUNCTION_ARGS)
{
	return awa_table_changed_trigger(fcinfo, "queue_policy_changed()",
									 "awa.queue_privileges, awa.queue_pauses and "
									 "awa_internal.queue_limits");
}
