/*
 * Store identity (identity.c).
 */
#ifndef FDX_STORE_IDENTITY_H
#define FDX_STORE_IDENTITY_H

#include "common/sha256.h"
#include "store/store_internal.h"

/* Store identity (identity.c). */
#define FDX_STORE_ID_HEX 33 /* 32 lowercase hex digits and a NUL */
/* Whether id is a store identity as fdx makes them. */
int fdx_store_id_valid(const unsigned char *id);
/* The store's identity, checked. */
int fdx_identity_read(fdx_store *s, char id[FDX_STORE_ID_HEX]);
/* The digest over the store's whole ledger, and its last row id (0: empty). */
int fdx_identity_ledger_digest(fdx_store *s, int64_t *high, char hex[FDX_SHA256_HEX]);
/*
 * Inside a write transaction: ties an identity not yet tied to a file to this
 * one; with may_fork, gives a store whose file is a copy a new identity and
 * records the one it was copied from.
 */
int fdx_identity_check_file(fdx_store *s, int may_fork);

#endif
