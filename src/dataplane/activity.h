/*-------------------------------------------------------------------------
 *
 * activity.h
 *	  A transaction that writes the data plane wakes an idle worker when it
 *	  commits (activity.c).
 *
 * src/dataplane/activity.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_ACTIVITY_H
#define AWA_ACTIVITY_H

extern void awa_activity_note(void);
extern void awa_activity_note_deferred(void);

#endif							/* AWA_ACTIVITY_H */
