/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubernetes resource quantities ("500m", "2", "1.5Gi", "1e3"): apimachinery's ParseQuantity
 * grammar, rounding and error texts, its Value()/MilliValue() rounding, comparison, addition
 * and canonical String().
 *
 * Representation. A quantity is mant * 10^exp with a signed 128-bit mantissa of at most 38
 * decimal digits and a 32-bit exponent, plus the format it was written in. That is exact for
 * every value apimachinery parses whose significant digits (after its rounding up to 1n) fit in
 * 38 digits: every int64 at nano precision (28 digits), and huge or tiny exponents such as
 * "1e100". Parsing a value that needs more than 38 significant digits returns -ERANGE, where
 * apimachinery would keep an arbitrary-precision decimal; arithmetic that would need more than
 * 38 digits returns -ERANGE and leaves its operand unchanged (see ncm_quantity_add()).
 *
 * Parsing follows apimachinery exactly (grammar quirks included): "+1", "-.5", ".5", "1.",
 * "1.G", "1E" (exa), "8Ei", "e3" and "-" all parse; every value is rounded up (away from zero)
 * to a multiple of 1n; a binary-SI value is capped at 2^63-1 in magnitude, and a binary-SI
 * value strictly between 0 and 1 (in magnitude) switches to decimal SI. Decimal-SI and
 * exponent values are not capped. An exponent beyond +-(2^31-1) is rejected (ErrSuffix), as
 * current apimachinery does; older versions wrapped it around.
 *
 * Value(), MilliValue() and ScaledValue() round up away from zero and saturate at INT64_MIN /
 * INT64_MAX for quantities beyond int64, as apimachinery's int64 fast path does (its
 * arbitrary-precision path wraps instead; nodecm always saturates).
 *
 * Quantities are plain values: no allocation, copy them with '='. A zero-initialised
 * ncm_quantity ({0} or NCM_QUANTITY_ZERO) is 0 in decimal SI.
 */
#ifndef NODECM_QUANTITY_H
#define NODECM_QUANTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/buf.h>
#include <nodecm/common.h>
#include <nodecm/error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The three ways apimachinery writes a quantity; canonical output keeps the parsed one. */
typedef enum ncm_quantity_format {
        NCM_QUANTITY_DECIMAL_SI = 0,   /* "12M", "500m", "1k", "3" */
        NCM_QUANTITY_BINARY_SI,        /* "12Mi", "1Gi" */
        NCM_QUANTITY_DECIMAL_EXPONENT, /* "12e6", "1e-3" */
} ncm_quantity_format;

/* A GNU extension; __extension__ keeps -Wpedantic quiet for every includer. */
__extension__ typedef __int128 ncm_int128;

typedef struct ncm_quantity {
        ncm_int128 mant_; /* private: use the functions below */
        int32_t exp_;     /* private */
        ncm_quantity_format format;
} ncm_quantity;

#define NCM_QUANTITY_ZERO ((ncm_quantity){0, 0, NCM_QUANTITY_DECIMAL_SI})

/* Buffer size that holds any canonical quantity string, NUL included. */
#define NCM_QUANTITY_STRLEN 64

/* apimachinery's error texts (resource.ErrFormatWrong, ErrNumeric, ErrSuffix). */
#define NCM_QUANTITY_ERR_FORMAT                                                                    \
        "quantities must match the regular expression "                                            \
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
#define NCM_QUANTITY_ERR_NUMERIC "unable to parse numeric part of quantity"
#define NCM_QUANTITY_ERR_SUFFIX "unable to parse quantity's suffix"

/*
 * Parse S (NUL-terminated) as apimachinery's ParseQuantity does. No whitespace is allowed
 * (" 1" and "1 " fail, as in ParseQuantity; JSON decoding trims before calling it).
 * Returns 0 and writes *RET, or:
 *  -EINVAL  with err->msg exactly one of NCM_QUANTITY_ERR_FORMAT, _NUMERIC, _SUFFIX;
 *  -ERANGE  "quantity needs more than 38 significant digits" (nodecm's limit, see above).
 * *RET is untouched on failure.
 */
NCM_API int ncm_quantity_parse(const char *s, ncm_quantity *ret, ncm_error *err);

/* As ncm_quantity_parse() for LEN bytes (which may contain NUL bytes: those fail). */
NCM_API int ncm_quantity_parse_n(const char *s, size_t len, ncm_quantity *ret, ncm_error *err);

/* Flags of ncm_quantity_parse_flags(). */
enum {
        /*
         * A binary-SI value beyond 2^63-1 is -ERANGE ("quantity is larger than
         * 9223372036854775807") instead of capped there as apimachinery does: a pod's
         * "99999999999999999999Ei" is a mistake, not a request for 8Ei - 1 bytes.
         */
        NCM_QUANTITY_NO_CAP = 1 << 0,
};

/* ncm_quantity_parse_n() with FLAGS (NCM_QUANTITY_*; 0: exactly ncm_quantity_parse_n()). */
NCM_API int ncm_quantity_parse_flags(const char *s, size_t len, unsigned flags, ncm_quantity *ret,
                                     ncm_error *err);

/* NewQuantity(value, format): VALUE units. */
NCM_API ncm_quantity ncm_quantity_from_int(int64_t value, ncm_quantity_format format);

/*
 * VALUE * 10^SCALE in FORMAT: NewScaledQuantity(value, scale) is FORMAT = decimal SI,
 * NewMilliQuantity(value, format) is SCALE = -3.
 */
NCM_API ncm_quantity ncm_quantity_from_scaled(int64_t value, int32_t scale,
                                              ncm_quantity_format format);

/* Value(): ceil(|q|) with q's sign (rounded away from zero), saturated to int64. */
NCM_API int64_t ncm_quantity_value(const ncm_quantity *q) NCM_PURE;

/* MilliValue(): q * 1000 rounded away from zero, saturated to int64. */
NCM_API int64_t ncm_quantity_milli_value(const ncm_quantity *q) NCM_PURE;

/* ScaledValue(scale): q / 10^SCALE rounded away from zero, saturated to int64. */
NCM_API int64_t ncm_quantity_scaled_value(const ncm_quantity *q, int32_t scale) NCM_PURE;

/*
 * The CPU manager's "integer number of CPUs" test, q.Value()*1000 == q.MilliValue(), with
 * Go's int64 arithmetic: the product wraps around, so a quantity above about 9.2e15 is never
 * integral, exactly as in the kubelet.
 */
NCM_API bool ncm_quantity_is_integer(const ncm_quantity *q) NCM_PURE;

/* -1, 0 or 1. */
NCM_API int ncm_quantity_sign(const ncm_quantity *q) NCM_PURE;
NCM_API bool ncm_quantity_is_zero(const ncm_quantity *q) NCM_PURE;

/* Cmp(): -1, 0 or 1 by value (formats are ignored). Exact for every representable value. */
NCM_API int ncm_quantity_cmp(const ncm_quantity *a, const ncm_quantity *b) NCM_PURE;

/* a == b by value (apimachinery's Equal). */
NCM_API bool ncm_quantity_equal(const ncm_quantity *a, const ncm_quantity *b) NCM_PURE;

/*
 * Q += Y (Add) / Q -= Y (Sub). As in apimachinery, a zero Q takes Y's format. Returns 0, or
 * -ERANGE (Q unchanged) when the exact result, or either operand written at the smaller of the
 * two exponents, needs more than 38 digits. Sums of quantities within int64 at nano precision
 * (28 digits) never fail.
 */
NCM_API int ncm_quantity_add(ncm_quantity *q, const ncm_quantity *y);
NCM_API int ncm_quantity_sub(ncm_quantity *q, const ncm_quantity *y);

/* Q = -Q (Neg). */
NCM_API void ncm_quantity_neg(ncm_quantity *q);

/*
 * RoundUp(scale): round Q away from zero to a multiple of 10^SCALE (nothing happens when it
 * already is one). Returns true when no precision was lost. The API server applies
 * RoundUp(-3) to every resource list it stores.
 */
NCM_API bool ncm_quantity_round_up(ncm_quantity *q, int32_t scale);

/*
 * The canonical text (apimachinery CanonicalizeBytes): "1.5" -> "1500m", "1024Mi" -> "1Gi",
 * "1e3" -> "1e3", "1000" -> "1k", "0.5Gi" -> "512Mi", zero -> "0". Writes into BUF and returns
 * BUF.
 *
 * Go's String() returns the input text verbatim when it was parsed in canonical form; that
 * differs from this only for a leading '+' or leading zeros ("+1", "01"), which nodecm drops.
 * A binary-SI quantity whose integer value exceeds 2^128 (reachable only by arithmetic) is
 * written in decimal-exponent form.
 */
NCM_API char *ncm_quantity_to_string(const ncm_quantity *q, char buf[NCM_QUANTITY_STRLEN]);

/* Append the canonical text to B. */
NCM_API void ncm_quantity_append(ncm_buf *b, const ncm_quantity *q);

#ifdef __cplusplus
}
#endif
#endif
