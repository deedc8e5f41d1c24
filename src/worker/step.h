/*-------------------------------------------------------------------------
 *
 * step.h
 *	  The step runner: one maintenance operation in one transaction, and its
 *	  result read by column name with the types the SQL function declares.
 *
 * src/worker/step.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_STEP_H
#define AWA_STEP_H

#include "src/worker/schema_version.h"


/*
 * The schema of the extension's objects, named once: in the SQL of the steps
 * as a qualifier (AWA_FN("rotate") is awa.rotate) and as the p_schema argument
 * the maintenance functions check (AWA_SCHEMA_ARG is 'awa').
 */
#define AWA_SCHEMA			"awa"
#define AWA_FN(name)		AWA_SCHEMA "." name
#define AWA_SCHEMA_ARG		"'" AWA_SCHEMA "'"

/*
 * The schema of the internals from 0.10 (AWA_FEATURE_INTERNAL_SCHEMA): a step
 * that calls one names it with AWA_INTERNAL_FN where the version has the
 * feature, with AWA_FN before (awa_run_step_by_version picks).
 */
#define AWA_INTERNAL_SCHEMA	"awa_internal"
#define AWA_INTERNAL_FN(name)	AWA_INTERNAL_SCHEMA "." name

typedef enum AwaExtensionState
{
	AWA_EXT_ABSENT = 0,
	AWA_EXT_READY,				/* installed at a version this library runs */
	AWA_EXT_OTHER_VERSION		/* installed at a version this library does not run */
} AwaExtensionState;

/* The parameters $1, $2, ... of a step's SQL (awa_step_param adds one). */
#define AWA_STEP_MAX_PARAMS		5

typedef struct AwaStepParams
{
	int			nparams;
	Oid			types[AWA_STEP_MAX_PARAMS];
	Datum		values[AWA_STEP_MAX_PARAMS];
} AwaStepParams;

/* The type of a result column, as the SQL declares it; checked when read. */
typedef enum AwaColumnType
{
	AWA_COL_TEXT,				/* text: copied whole into the caller's context */
	AWA_COL_INT8,				/* bigint */
	AWA_COL_BOOL,				/* boolean */
	AWA_COL_INT4_ARRAY			/* int[] without NULLs */
} AwaColumnType;

/* One column a step reads from the first row of its result. */
typedef struct AwaStepColumn
{
	const char *name;			/* NULL ends a list */
	AwaColumnType type;
} AwaStepColumn;

#define AWA_STEP_MAX_COLUMNS	4

/* One column's value; isnull when NULL, or when the SQL returned no row. */
typedef struct AwaStepValue
{
	bool		isnull;
	int64		int8;
	bool		boolean;
	char	   *text;			/* palloc'd in the caller's memory context */
	int		   *ints;			/* likewise; nints of them */
	int			nints;
} AwaStepValue;

typedef struct AwaStepResult
{
	AwaExtensionState extension;
	const AwaSchemaVersion *schema; /* at AWA_EXT_READY the version's row, else NULL */
	Oid			extension_oid;	/* the extension's pg_extension row; InvalidOid: none */
	bool		has_row;		/* the SQL ran and returned a row */
	const AwaStepColumn *columns;	/* what values[] hold, by name */
	AwaStepValue values[AWA_STEP_MAX_COLUMNS];
} AwaStepResult;

/*
 * Run sql (NULL: only probe the extension) with params (NULL: none) in a
 * transaction of its own, and read the given columns (NULL: none) of its
 * first row by name. A column
 * missing from the result, or of another type than declared, is an error of
 * the step. A step that needs the extension runs its SQL only when the
 * extension is installed at the version this library maintains; one that
 * does not (leader lock, instance id) always runs. Returns false when the
 * step raised an error (already logged and counted).
 */
extern bool awa_run_step(const char *label, const char *sql, const AwaStepParams *params,
						 const AwaStepColumn *columns, AwaStepResult *res);

/*
 * awa_run_step with SQL that differs by version: sql at the versions that
 * have sql_needs, sql_without (NULL: nothing runs) at the others. The choice
 * is made in the step's own transaction, after its read of the version
 * installed, so that a step never runs one version's SQL against another.
 */
extern bool awa_run_step_by_version(const char *label, const char *sql,
									AwaSchemaFeature sql_needs, const char *sql_without,
									const AwaStepParams *params,
									const AwaStepColumn *columns, AwaStepResult *res);
extern bool awa_run_session_step(const char *label, const char *sql,
								 const AwaStepParams *params,
								 const AwaStepColumn *columns, AwaStepResult *res);
extern void awa_step_param(AwaStepParams *params, Oid type, Datum value);

/* A column of a step's result, by the name it was read under. */
extern const char *awa_step_text(const AwaStepResult *res, const char *column);
extern bool awa_step_text_is(const AwaStepResult *res, const char *column,
							 const char *value);
extern int64 awa_step_int8(const AwaStepResult *res, const char *column);
extern bool awa_step_bool(const AwaStepResult *res, const char *column);
extern int	awa_step_ints(const AwaStepResult *res, const char *column, const int **ints);

#endif							/* AWA_STEP_H */
