/*-------------------------------------------------------------------------
 *
 * launcher.h
 *	  The launcher (launcher.c): registered by _PG_init, it keeps one
 *	  maintenance worker running per database in awa_bgw.databases.
 *
 * src/worker/launcher.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_LAUNCHER_H
#define AWA_LAUNCHER_H

extern void awa_register_launcher(void);

/* bgw_function_name of the launcher */
extern PGDLLEXPORT void awa_bgw_launcher_main(Datum main_arg);

#endif							/* AWA_LAUNCHER_H */
