/*-------------------------------------------------------------------------
 *
 * relcache.h
 *	  The relations of schema awa the hot paths name, found through a
 *	  backend's cache of their OIDs and opened (relcache.c).
 *
 * src/rel/relcache.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_RELCACHE_H
#define AWA_RELCACHE_H

#include "fmgr.h"
#include "storage/lockdefs.h"
#include "utils/relcache.h"

/* told of a relcache invalidation: relid, or InvalidOid for every relation */
typedef void (*AwaRelcacheListener) (Oid relid);

extern void awa_relcache_listen(AwaRelcacheListener listener);
extern Oid	awa_namespace(void);
extern Oid	awa_internal_namespace(void);
extern Oid	awa_internal_function(const char *name, int nargs, const Oid *argtypes);
extern int	awa_path_pin(void);
extern void awa_path_unpin(int nest);
extern int	awa_spi_connect_pinned(void);
extern void awa_spi_finish_unpinned(int nest);
extern const char *awa_internal_schema_quoted(void);
extern Oid	awa_relid(Oid nsp, const char *name);
extern Relation awa_open_table(Oid nsp, const char *family, int slot);
extern Relation awa_open_table_for(Oid nsp, const char *family, int slot,
								   LOCKMODE lockmode);
extern Relation awa_open_index(Relation heap, int ncols, const char *const *cols);
extern Relation awa_open_index_if(Relation heap, int ncols, const char *const *cols);
extern Relation awa_open_brin_index(Relation heap, const char *col);
extern Relation awa_open_expr_index_if(Relation heap, int ncols, const char *const *cols,
									   int expr_at, const char *fn);
extern Relation awa_open_tombstone_index(Relation done);
extern Relation awa_open_position_index(Relation claims);
extern Datum awa_table_changed_trigger(FunctionCallInfo fcinfo, const char *fn,
									   const char *tables);

#endif							/* AWA_RELCACHE_H */
