/*
 * The wire schema number as the text a record carries, so the decoder and the
 * encoder both derive it from FDX_WIRE_SCHEMA instead of repeating it.
 */
#ifndef FDX_WIRE_H
#define FDX_WIRE_H

#include "fdx.h"

#define FDX_TEXT_OF_(x) #x
#define FDX_TEXT_OF(x)  FDX_TEXT_OF_(x)

/* "2" for schema 2. */
#define FDX_WIRE_SCHEMA_TEXT FDX_TEXT_OF(FDX_WIRE_SCHEMA)

#endif
