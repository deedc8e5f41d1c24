/*-------------------------------------------------------------------------
 *
 * relcache.c
 *	  A backend's cache of the OIDs the hot paths look up by name: schema
 *	  awa, the schema of the internals (awa_internal, a member of the
 *	  extension; awa before 0.10; the library's internal functions are found
 *	  there by signature), the ring children and tables named in it, and the btree index of a
 *	  child whose leading keys are given columns (docs/storage.md §A.13), or
 *	  its BRIN index on one column (docs/proposals/job_id_lookup.md §4), or
 *	  the btree one of whose keys is a function of a column (the claim-order
 *	  key, docs/proposals/claim_order_key.md); the
 *	  finding of those indexes, the cancel tombstones' partial one too; and
 *	  the opening of the tables by name (awa_open_table), rights checked.
 *
 * An entry is dropped by the relcache invalidation of the relation it names
 * or of the heap or index it pairs (a TRUNCATE, DROP, ALTER, CREATE INDEX or
 * REINDEX of either sends one), and the whole cache by a reset (an
 * invalidation of every relation) or by any change to pg_namespace. Only
 * relations that exist are cached; a name that is missing is looked up again
 * each time. A heap's lack of an index that a reader may do without (the job
 * lookup asks for a btree, then a BRIN index) is cached as well: CREATE INDEX
 * sends the heap's invalidation, which drops it. A stale OID could only come from an invalidation not yet read,
 * and table_open reads them when it takes its lock, as it does for an OID
 * found through the syscache.
 *
 * The same callback passes every relcache invalidation on to the modules
 * above that keep what they read from tables of schema awa and listen
 * (awa_relcache_listen): src/dataplane/queuepolicy.c for the per-queue policy
 * tables, src/dataplane/xidspace.c for the mark of the xid space. Their
 * statement triggers (awa_table_changed_trigger) send the relcache
 * invalidation of their table at commit. A module listens before it first
 * reads its table; nothing it could have kept is missed before that.
 *
 * src/rel/relcache.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_index.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_proc.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/primnodes.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "src/rel/relcache.h"
#include "src/rel/scan.h"

#define KEY_LEN (NAMEDATALEN * 2)

typedef struct CachedOid
{
	char		key[KEY_LEN];	/* "r <nsp> <name>", or "i <heap> <col>,<col>..."
								 * (i, p, b: the IndexKind) */
	Oid			oid;			/* the relation or the index; InvalidOid: a
								 * heap's lack of an index of that kind */
	Oid			heap;			/* an index's heap, else InvalidOid */
} CachedOid;

static HTAB *oid_cache = NULL;
static Oid	awa_nsp = InvalidOid;
static Oid	awa_internal_nsp = InvalidOid;

/*
 * The tables awa_open_table_for opened last, direct-mapped by the family's
 * name and slot, so that a call's dozen opens skip the name's formatting and
 * the hash of relation OIDs; with the user whose SELECT privilege was last
 * found as the table's owner, so that the owner (the API's SECURITY DEFINER
 * functions run as it) is not checked again until the table's next
 * invalidation (which a change of owner or of privileges sends).
 */
#define OPEN_SLOTS	64
typedef struct OpenedTable
{
	char		family[NAMEDATALEN];	/* "": free */
	int			slot;
	Oid			nsp;
	Oid			relid;
	Oid			owner_ok;		/* InvalidOid: check the privilege */
} OpenedTable;

static OpenedTable opened[OPEN_SLOTS];

/* the modules told of each relcache invalidation (awa_relcache_listen) */
#define MAX_LISTENERS	4
static AwaRelcacheListener listeners[MAX_LISTENERS];
static int	nlisteners = 0;

static void
forget_opened(Oid relid)
{
	int			i;

	for (i = 0; i < OPEN_SLOTS; i++)
		if (!OidIsValid(relid) || opened[i].relid == relid)
			opened[i].family[0] = '\0';
}

static void
forget_all(void)
{
	forget_opened(InvalidOid);
	if (oid_cache != NULL)
		hash_destroy(oid_cache);
	oid_cache = NULL;
	awa_nsp = InvalidOid;
	awa_internal_nsp = InvalidOid;
}

static void
relcache_changed(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS seq;
	CachedOid  *e;
	int			i;

	for (i = 0; i < nlisteners; i++)
		listeners[i] (relid);
	forget_opened(relid);
	if (oid_cache == NULL)
		return;
	if (!OidIsValid(relid))
	{
		forget_all();
		return;
	}
	hash_seq_init(&seq, oid_cache);
	while ((e = hash_seq_search(&seq)) != NULL)
		if (e->oid == relid || e->heap == relid)
			(void) hash_search(oid_cache, e->key, HASH_REMOVE, NULL);
}

static void
namespaces_changed(Datum arg, int cacheid, uint32 hashvalue)
{
	forget_all();
}

static void
register_callbacks(void)
{
	static bool registered = false;

	if (registered)
		return;
	CacheRegisterRelcacheCallback(relcache_changed, (Datum) 0);
	CacheRegisterSyscacheCallback(NAMESPACEOID, namespaces_changed, (Datum) 0);
	registered = true;
}

static HTAB *
cache(void)
{
	HASHCTL		ctl;

	register_callbacks();
	if (oid_cache == NULL)
	{
		ctl.keysize = KEY_LEN;
		ctl.entrysize = sizeof(CachedOid);
		ctl.hcxt = CacheMemoryContext;
		oid_cache = hash_create("awa_bgw relation OIDs", 256, &ctl,
								HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	}
	return oid_cache;
}

/*
 * Tell listener of every relcache invalidation from now on, with the OID of
 * the relation (InvalidOid: every relation), before this cache drops its
 * entries. A module above this one calls it before it first reads a table of
 * its own; listening twice is listening once.
 */
void
awa_relcache_listen(AwaRelcacheListener listener)
{
	int			i;

	register_callbacks();
	for (i = 0; i < nlisteners; i++)
		if (listeners[i] == listener)
			return;
	if (nlisteners >= MAX_LISTENERS)
		elog(ERROR, "awa_bgw: more than %d relcache listeners", MAX_LISTENERS);
	listeners[nlisteners++] = listener;
}

/* the OID of schema awa (errors when there is none) */
Oid
awa_namespace(void)
{
	(void) cache();
	if (!OidIsValid(awa_nsp))
		awa_nsp = get_namespace_oid("awa", false);
	return awa_nsp;
}

/*
 * The OID of the schema of the internals: awa_internal when it is a member
 * of extension awa_bgw (0.10 and later, whose scripts create it), else
 * schema awa (0.7 to 0.9, where the internals are). A schema awa_internal
 * that is no member (one a user created in an older database) is never
 * used: a SECURITY DEFINER function of the extension would otherwise call
 * what that user put there (docs/proposals/internal_schema.md, "Hijack").
 * Cached with awa_nsp, and dropped with it by any change to pg_namespace.
 */
Oid
awa_internal_namespace(void)
{
	Oid			nsp;
	Oid			ext;

	(void) cache();
	if (OidIsValid(awa_internal_nsp))
		return awa_internal_nsp;
	nsp = get_namespace_oid("awa_internal", true);
	ext = get_extension_oid("awa_bgw", true);
	if (OidIsValid(nsp) && OidIsValid(ext) &&
		getExtensionOfObject(NamespaceRelationId, nsp) == ext)
		awa_internal_nsp = nsp;
	else
		awa_internal_nsp = awa_namespace();
	return awa_internal_nsp;
}

/*
 * The OID of the internal function name(argtypes) in the schema of the
 * internals (awa_internal_namespace), found by its exact signature and with
 * no privilege check: the callers run it on the extension's behalf. An error
 * when there is none.
 */
Oid
awa_internal_function(const char *name, int nargs, const Oid *argtypes)
{
	Oid			nsp = awa_internal_namespace();
	oidvector  *args = buildoidvector(argtypes, nargs);
	Oid			fn;

	fn = GetSysCacheOid3(PROCNAMEARGSNSP, Anum_pg_proc_oid, CStringGetDatum(name),
						 PointerGetDatum(args), ObjectIdGetDatum(nsp));
	if (!OidIsValid(fn))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("function %s.%s does not exist", get_namespace_name(nsp), name),
				 errdetail("The library calls it; the extension awa_bgw installed in this "
						   "database lacks it."),
				 errhint("Update the extension to the version of the library "
						 "(ALTER EXTENSION awa_bgw UPDATE).")));
	pfree(args);
	return fn;
}

/*
 * The API's entry points in C run as the extension's owner without a SET
 * clause (docs/storage.md §5, "Privileges and search_path"): the SQL they run
 * (SPI, or a SQL or PL/pgSQL function called by OID that has no SET of its
 * own) runs between awa_path_pin and awa_path_unpin, under the path the SET
 * clause gave. An error on the way unwinds the pin with the (sub)transaction,
 * as it unwinds a SET clause's.
 */
int
awa_path_pin(void)
{
	int			nest = NewGUCNestLevel();

	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	return nest;
}

/* the caller's search_path again, as it was at awa_path_pin (nest, its result) */
void
awa_path_unpin(int nest)
{
	AtEOXact_GUC(true, nest);
}

/*
 * SPI connected under the pinned path: what C code that runs SQL text calls
 * first; awa_spi_finish_unpinned(its result) after the last statement.
 */
int
awa_spi_connect_pinned(void)
{
	int			nest = awa_path_pin();

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	return nest;
}

/* SPI finished, then the caller's path again (nest: awa_spi_connect_pinned's) */
void
awa_spi_finish_unpinned(int nest)
{
	SPI_finish();
	awa_path_unpin(nest);
}

/*
 * The schema of the internals, quoted as a qualifier for SQL text (palloc'd
 * in the caller's context): awa_internal, or awa before 0.10.
 */
const char *
awa_internal_schema_quoted(void)
{
	return quote_identifier(get_namespace_name(awa_internal_namespace()));
}

/* get_relname_relid(name, nsp), cached */
Oid
awa_relid(Oid nsp, const char *name)
{
	char		key[KEY_LEN] = {0};
	CachedOid  *e;
	bool		found;
	Oid			relid;

	snprintf(key, sizeof(key), "r %u %s", nsp, name);
	e = hash_search(cache(), key, HASH_FIND, NULL);
	if (e != NULL)
		return e->oid;
	relid = get_relname_relid(name, nsp);
	if (OidIsValid(relid))
	{
		e = hash_search(cache(), key, HASH_ENTER, &found);
		e->oid = relid;
		e->heap = InvalidOid;
	}
	return relid;
}

/*
 * awa.<family>_<slot> (awa.<family> when slot < 0), after a SELECT privilege
 * check, with ACCESS SHARE (waits, as a query would, behind a prune's
 * exclusive lock, which prune holds for awa_bgw.prune_lock_timeout at most).
 */
Relation
awa_open_table(Oid nsp, const char *family, int slot)
{
	return awa_open_table_for(nsp, family, slot, AccessShareLock);
}

/* awa_open_table with another lock (the caller's rights were checked for SELECT) */
Relation
awa_open_table_for(Oid nsp, const char *family, int slot, LOCKMODE lockmode)
{
	uint32		h = (uint32) slot;
	const char *c;
	OpenedTable *o;
	char		name[NAMEDATALEN];
	Oid			relid;
	Relation	rel;

	for (c = family; *c != '\0'; c++)
		h = h * 31 + (unsigned char) *c;
	o = &opened[h % OPEN_SLOTS];
	(void) cache();				/* the invalidation callbacks, before the first entry */
	if (o->slot == slot && o->nsp == nsp && o->family[0] != '\0' &&
		strcmp(o->family, family) == 0)
	{
		if (o->owner_ok == GetUserId())
			return table_open(o->relid, lockmode);
		relid = o->relid;
	}
	else
	{
		if (slot >= 0)
			snprintf(name, sizeof(name), "%s_%d", family, slot);
		else
			strlcpy(name, family, sizeof(name));
		relid = awa_relid(nsp, name);
		if (!OidIsValid(relid))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_TABLE),
					 errmsg("relation \"awa.%s\" does not exist", name)));
		strlcpy(o->family, family, sizeof(o->family));
		o->slot = slot;
		o->nsp = nsp;
		o->relid = relid;
		o->owner_ok = InvalidOid;
	}
	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, get_rel_name(relid));
	rel = table_open(relid, lockmode);
	/* the entry is still this table's unless the open took an invalidation */
	if (o->family[0] != '\0' && o->relid == relid && rel->rd_rel->relowner == GetUserId())
		o->owner_ok = GetUserId();
	return rel;
}

/* the kinds of index find_index looks for, each its letter in the cache's key */
typedef enum IndexKind
{
	INDEX_BTREE = 'i',			/* btree, not partial, leading keys cols */
	INDEX_BTREE_PARTIAL = 'p',	/* btree, maybe partial, leading keys cols */
	INDEX_BRIN = 'b',			/* BRIN, not partial, its only keys cols */
	INDEX_BTREE_EXPR = 'x'		/* btree, not partial, leading keys cols but
								 * one, a function of its column */
} IndexKind;

/*
 * for INDEX_BTREE_EXPR: the key that is fn(column), and fn, the internal
 * function name of the column's type, looked up only when the cache has no
 * entry for the index
 */
typedef struct IndexExpr
{
	int			at;
	const char *name;
	Oid			fn;				/* set by find_index_expr on a miss */
} IndexExpr;

/* Whether key expr->at of idx is expr->fn(the column want[expr->at]) alone. */
static bool
key_is_expr(Relation idx, const IndexExpr *expr, const AttrNumber *want)
{
	List	   *exprs = RelationGetIndexExpressions(idx);
	FuncExpr   *f;
	Var		   *v;

	if (list_length(exprs) != 1 || !IsA(linitial(exprs), FuncExpr))
		return false;
	f = linitial(exprs);
	if (f->funcid != expr->fn || list_length(f->args) != 1 || !IsA(linitial(f->args), Var))
		return false;
	v = linitial(f->args);
	return v->varattno == want[expr->at];
}

/*
 * Whether idx is a valid index of kind, without expressions, whose leading
 * keys are want[] (for BRIN: whose keys are exactly want[]); for
 * INDEX_BTREE_EXPR, with one expression, its key expr->at (key_is_expr).
 */
static bool
index_matches(Relation idx, IndexKind kind, int ncols, const AttrNumber *want,
			  const IndexExpr *expr)
{
	Form_pg_index ind = idx->rd_index;
	bool		has_exprs = !heap_attisnull(idx->rd_indextuple, Anum_pg_index_indexprs, NULL);
	bool		ok;
	int			i;

	if (kind == INDEX_BRIN)
		ok = idx->rd_rel->relam == BRIN_AM_OID && ind->indnkeyatts == ncols;
	else
		ok = idx->rd_rel->relam == BTREE_AM_OID && ind->indnkeyatts >= ncols;
	ok = ok && ind->indisvalid && has_exprs == (kind == INDEX_BTREE_EXPR) &&
		(kind == INDEX_BTREE_PARTIAL ||
		 heap_attisnull(idx->rd_indextuple, Anum_pg_index_indpred, NULL));
	for (i = 0; ok && i < ncols; i++)
		ok = kind == INDEX_BTREE_EXPR && i == expr->at
			? ind->indkey.values[i] == 0
			: ind->indkey.values[i] == want[i];
	return ok && (kind != INDEX_BTREE_EXPR || key_is_expr(idx, expr, want));
}

/*
 * The index of heap of kind on cols (see index_matches), with ACCESS SHARE.
 * When there is none: NULL if missing_ok (and that is cached, until heap's
 * next invalidation, as CREATE INDEX sends one), else an error. The function
 * of an INDEX_BTREE_EXPR is looked up only on a miss: a cached entry names
 * an index found with it, and the function cannot be dropped while that
 * index stands (dropping both sends heap's invalidation, which drops the
 * entry).
 */
static Relation
find_index_expr(Relation heap, IndexKind kind, int ncols, const char *const *cols,
				bool missing_ok, IndexExpr *expr)
{
	AttrNumber	want[INDEX_MAX_KEYS];
	char		key[KEY_LEN] = {0};
	int			len;
	CachedOid  *e;
	List	   *ids;
	ListCell   *lc;
	int			i;
	bool		found;

	Assert(ncols <= INDEX_MAX_KEYS);
	len = snprintf(key, sizeof(key), "%c %u", (char) kind, RelationGetRelid(heap));
	for (i = 0; i < ncols && len < KEY_LEN; i++)
		len += snprintf(key + len, sizeof(key) - len, "%c%s", i ? ',' : ' ', cols[i]);
	if (len >= KEY_LEN)
		elog(ERROR, "awa_bgw: index key too long");
	e = hash_search(cache(), key, HASH_FIND, NULL);
	if (e != NULL && OidIsValid(e->oid))
		return index_open(e->oid, AccessShareLock);
	if (e != NULL && missing_ok)
		return NULL;
	for (i = 0; i < ncols; i++)
		want[i] = awa_column_number(heap, cols[i]);
	if (expr != NULL)
	{
		Oid			argtype = TupleDescAttr(RelationGetDescr(heap),
											want[expr->at] - 1)->atttypid;

		expr->fn = awa_internal_function(expr->name, 1, &argtype);
	}
	ids = RelationGetIndexList(heap);
	foreach(lc, ids)
	{
		Relation	idx = index_open(lfirst_oid(lc), AccessShareLock);

		if (index_matches(idx, kind, ncols, want, expr))
		{
			list_free(ids);
			e = hash_search(cache(), key, HASH_ENTER, &found);
			e->oid = RelationGetRelid(idx);
			e->heap = RelationGetRelid(heap);
			return idx;
		}
		index_close(idx, AccessShareLock);
	}
	list_free(ids);
	if (missing_ok)
	{
		e = hash_search(cache(), key, HASH_ENTER, &found);
		e->oid = InvalidOid;
		e->heap = RelationGetRelid(heap);
		return NULL;
	}
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("relation \"%s\" has no btree index on (%s, ...)",
					RelationGetRelationName(heap), cols[0])));
	return NULL;				/* keep compiler quiet */
}

static Relation
find_index(Relation heap, IndexKind kind, int ncols, const char *const *cols,
		   bool missing_ok)
{
	return find_index_expr(heap, kind, ncols, cols, missing_ok, NULL);
}

/*
 * The btree index of heap whose leading keys are cols but key expr_at, which
 * is fn(cols[expr_at]), fn the internal function of that name taking the
 * column's type (awa_internal_function), with ACCESS SHARE; NULL when heap
 * has none. Once the index is cached, neither it nor fn is looked up again
 * until heap's or the index's next invalidation.
 */
Relation
awa_open_expr_index_if(Relation heap, int ncols, const char *const *cols, int expr_at,
					   const char *fn)
{
	IndexExpr	expr = {expr_at, fn, InvalidOid};

	return find_index_expr(heap, INDEX_BTREE_EXPR, ncols, cols, true, &expr);
}

/* The plain btree index of heap whose leading keys are cols, with ACCESS SHARE. */
Relation
awa_open_index(Relation heap, int ncols, const char *const *cols)
{
	return find_index(heap, INDEX_BTREE, ncols, cols, false);
}

/* The same, or NULL when heap has none. */
Relation
awa_open_index_if(Relation heap, int ncols, const char *const *cols)
{
	return find_index(heap, INDEX_BTREE, ncols, cols, true);
}

/*
 * The plain BRIN index of heap whose only key is col, with ACCESS SHARE; NULL
 * when heap has none. Its readers ask its opclass for the strategy of their
 * operator (bloom's equality is not minmax's).
 */
Relation
awa_open_brin_index(Relation heap, const char *col)
{
	return find_index(heap, INDEX_BRIN, 1, &col, true);
}

/*
 * The index of a done child on (lane_id, lane_seq) that cancel tombstones
 * (run_lease 0) are found by: in 0.9 partial, WHERE run_lease = 0, so that a
 * completion writes no entry into it (docs/storage.md A.13); in 0.7 and 0.8 a
 * plain one. Either serves: the probe checks run_lease on each row it finds.
 */
Relation
awa_open_tombstone_index(Relation done)
{
	static const char *const cols[] = {"lane_id", "lane_seq"};

	return find_index(done, INDEX_BTREE_PARTIAL, 2, cols, false);
}

/*
 * The index of a claim child on (lane_id, claim_seq) that lane positions are
 * found by: in 0.9 partial, WHERE win_hi IS NOT NULL, so that only the one
 * receipt of a claim that carries the window has an entry (docs/storage.md
 * A.3). The reader skips receipts without a window either way.
 */
Relation
awa_open_position_index(Relation claims)
{
	static const char *const cols[] = {"lane_id", "claim_seq"};

	return find_index(claims, INDEX_BTREE_PARTIAL, 2, cols, false);
}

/*
 * The body of a statement trigger that makes every backend read a table
 * again: a relcache invalidation of the table, sent when the transaction
 * commits (and seen at once by this backend's next command, undone at
 * abort). fn names the SQL function, tables the tables it is the trigger of.
 */
Datum
awa_table_changed_trigger(FunctionCallInfo fcinfo, const char *fn, const char *tables)
{
	TriggerData *td = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("%s must be called as a trigger", fn),
				 errhint("It is the statement trigger of %s.", tables)));
	CacheInvalidateRelcacheByRelid(RelationGetRelid(td->tg_relation));
	return PointerGetDatum(NULL);
}
