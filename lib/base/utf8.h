/* SPDX-License-Identifier: Apache-2.0 */
/* Internal: UTF-8 validation. */
#ifndef NCM_BASE_UTF8_H
#define NCM_BASE_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Go's utf8.Valid: no surrogates, no overlong forms, nothing above U+10FFFF. */
bool ncm__utf8_valid(const char *s, size_t len);

#endif
