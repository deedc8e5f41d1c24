/*-------------------------------------------------------------------------
 *
 * xidspace.h
 *	  The xid space of a database's rows (xidspace.c): the checks before an
 *	  enqueue writes an entry or a reader reads a window.
 *
 * src/dataplane/xidspace.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_XIDSPACE_H
#define AWA_XIDSPACE_H

extern void awa_xid_space_adopt(void);
extern void awa_xid_space_require(void);

#endif							/* AWA_XIDSPACE_H */
