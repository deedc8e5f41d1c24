/*-------------------------------------------------------------------------
 *
 * registry.c
 *	  The registrations of new queues in flight, for the exact
 *	  awa_bgw.max_queues bound of 0.9 (docs/storage.md §A.5).
 *
 * A producer registering a new queue inserts its lanes without waiting for
 * anyone, so it cannot see the registrations of other transactions still in
 * progress. Before it counts the queues it can see, it reserves a place here
 * (a per-database counter in the extension's shared memory) and learns how
 * many other registrations are in flight; the reservation is given back when
 * its transaction ends (commit, abort or prepare), after the commit made its
 * rows visible. So of two registrations, the later to reserve sees the
 * earlier either as in flight or among the committed queues: the bound is
 * never overshot (it may refuse at the limit while another registration is
 * just committing). Nothing here outlives a restart, and nothing needs to.
 *
 *	awa.reserve_queue_registration()	-> others in flight, or -1 when no
 *										   entry is free (then not counted)
 *
 * src/dataplane/registry.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

#include "src/awa_bgw.h"
#include "src/dataplane/registry.h"

PG_FUNCTION_INFO_V1(awa_reserve_queue_registration);

/* New queues being registered by transactions in progress, per database. */
typedef struct AwaQueueRegistrations
{
	Oid			dboid;			/* registry lock; InvalidOid: a free entry */
	int			pending;		/* registry lock */
} AwaQueueRegistrations;

typedef struct AwaRegistry
{
	LWLock	   *lock;			/* the registry lock */
	AwaQueueRegistrations registering[AWA_BGW_MAX_DATABASES];
} AwaRegistry;

static AwaRegistry *registry = NULL;

/* reservations this backend's transaction holds, in MyDatabaseId */
static int	my_reservations = 0;
static bool callback_registered = false;

void
awa_registry_shmem_request(void)
{
	RequestAddinShmemSpace(MAXALIGN(sizeof(AwaRegistry)));
	RequestNamedLWLockTranche("awa_bgw registry", 1);
}

void
awa_registry_shmem_startup(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	registry = ShmemInitStruct("awa_bgw registry", sizeof(AwaRegistry), &found);
	if (!found)
	{
		memset(registry, 0, sizeof(AwaRegistry));
		registry->lock = &(GetNamedLWLockTranche("awa_bgw registry"))->lock;
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * the database's entry, taking a free one if create; NULL when none (the
 * caller holds the registry lock)
 */
static AwaQueueRegistrations *
registrations_of(Oid dboid, bool create)
{
	AwaQueueRegistrations *free_entry = NULL;
	int			i;

	for (i = 0; i < AWA_BGW_MAX_DATABASES; i++)
	{
		AwaQueueRegistrations *e = &registry->registering[i];

		if (e->dboid == dboid)
			return e;
		if (free_entry == NULL && (e->dboid == InvalidOid || e->pending == 0))
			free_entry = e;
	}
	if (create && free_entry != NULL)
	{
		free_entry->dboid = dboid;
		free_entry->pending = 0;
	}
	return create ? free_entry : NULL;
}

static void
release_reservations(XactEvent event, void *arg)
{
	AwaQueueRegistrations *e;

	if (my_reservations == 0 ||
		(event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT &&
		 event != XACT_EVENT_PREPARE && event != XACT_EVENT_PARALLEL_COMMIT &&
		 event != XACT_EVENT_PARALLEL_ABORT))
		return;
	LWLockAcquire(registry->lock, LW_EXCLUSIVE);
	e = registrations_of(MyDatabaseId, false);
	if (e != NULL)
		e->pending = Max(e->pending - my_reservations, 0);
	LWLockRelease(registry->lock);
	my_reservations = 0;
}

/*
 * Reserves a place for a new queue of this database until this transaction
 * ends; returns how many registrations of other transactions were in
 * flight, or -1 when shared memory has no entry free.
 */
int
awa_queue_registration_reserve(void)
{
	AwaQueueRegistrations *e;
	int			others = -1;

	if (registry == NULL)
		return -1;
	if (!callback_registered)
	{
		RegisterXactCallback(release_reservations, NULL);
		callback_registered = true;
	}
	LWLockAcquire(registry->lock, LW_EXCLUSIVE);
	e = registrations_of(MyDatabaseId, true);
	if (e != NULL)
	{
		/*
		 * Not this transaction's own reservations: the queues they stand for
		 * are its own rows, which it counts among the queues it sees.
		 */
		others = Max(e->pending - my_reservations, 0);
		e->pending++;
		my_reservations++;
	}
	LWLockRelease(registry->lock);
	return others;
}

/* reserve_queue_registration() RETURNS int: awa_queue_registration_reserve */
Datum
awa_reserve_queue_registration(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(awa_queue_registration_reserve());
}
