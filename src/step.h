/*-------------------------------------------------------------------------
 *
 * step.h
 *	  The step runner: one maintenance operation in one transaction.
 *
 * src/step.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_STEP_H
#define AWA_STEP_H

#include "src/awa_bgw.h"

typedef enum AwaExtensionState
{
	AWA_EXT_ABSENT = 0,
	AWA_EXT_READY,				/* installed at a version this library runs */
	AWA_EXT_OTHER_VERSION		/* installed at a version this library does not run */
} AwaExtensionState;

typedef struct AwaStepResult
{
	AwaExtensionState extension;
	bool		windows;		/* installed at 0.9, the data plane of windows */
	char		col1[AWA_LABEL_LEN];	/* first three columns of the first row */
	char		col2[AWA_LABEL_LEN];
	char		col3[AWA_ERROR_LEN];
} AwaStepResult;

/*
 * Run sql (NULL: only probe the extension) in a transaction of its own. A step
 * that needs the extension runs its SQL only when the extension is installed
 * at the version this library maintains; one that does not (leader lock,
 * instance id) always runs. Returns false when the step raised an error
 * (already logged and counted).
 */
extern bool awa_run_step(const char *label, const char *sql, AwaStepResult *res);
extern bool awa_run_session_step(const char *label, const char *sql, AwaStepResult *res);

#endif							/* AWA_STEP_H */
