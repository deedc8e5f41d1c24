/*-------------------------------------------------------------------------
 *
 * registry.h
 *	  Queue registrations under way, in shared memory (registry.c).
 *
 * src/dataplane/registry.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_REGISTRY_H
#define AWA_REGISTRY_H

extern void awa_registry_shmem_request(void);
extern void awa_registry_shmem_startup(void);
extern int	awa_queue_registration_reserve(void);

#endif							/* AWA_REGISTRY_H */
