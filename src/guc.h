/*-------------------------------------------------------------------------
 *
 * guc.h
 *	  The awa_bgw.* settings (guc.c): their variables, read by the worker,
 *	  the launcher and the checks of the API.
 *
 * src/guc.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_GUC_H
#define AWA_GUC_H

#include "src/awa_bgw.h"

extern char *awa_bgw_databases;
extern char *awa_bgw_role;
extern bool awa_bgw_enabled;
extern int	awa_bgw_rotate_interval[AWA_RING_COUNT];
extern int	awa_bgw_pinned_rotate_interval;
extern int	awa_bgw_rotate_fill;
extern int	awa_bgw_rotate_min_age;
extern int	awa_bgw_prune_lock_timeout;
extern int	awa_bgw_finished_job_window;
extern int	awa_bgw_fold_interval;
extern int	awa_bgw_fold_batch_size;
extern int	awa_bgw_horizon_pin_min_age;
extern bool awa_bgw_auto_flip;
extern int	awa_bgw_auto_flip_stable_period;
extern int	awa_bgw_runtime_fresh_window;
extern int	awa_bgw_idle_interval;
extern int	awa_bgw_runtime_heartbeat_interval;
extern int	awa_bgw_leader_retry_interval;
extern int	awa_bgw_promote_interval;
extern int	awa_bgw_rescue_interval;
extern int	awa_bgw_job_heartbeat_timeout;
extern int	awa_bgw_failed_retention;
extern int	awa_bgw_step_timeout;
extern int	awa_bgw_max_payload_size;
extern int	awa_bgw_max_queues;
extern int	awa_bgw_max_limited_queues;

extern void awa_define_gucs(void);

#endif							/* AWA_GUC_H */
