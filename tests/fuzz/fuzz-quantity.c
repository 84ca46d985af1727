/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The quantity parser. Whatever parses must print a canonical text that parses back to the
 * same value; the arithmetic must agree with the comparison.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/quantity.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char text[NCM_QUANTITY_STRLEN], again[NCM_QUANTITY_STRLEN];
        ncm_quantity q, back, sum, r;
        int64_t v, m;

        if (ncm_quantity_parse_n((const char *)data, size, &q, NULL) < 0)
                return 0;
        {
                /* without the cap: the same value, or refused only when it was capped */
                ncm_quantity nc;
                ncm_quantity cap = ncm_quantity_from_int(INT64_MAX, NCM_QUANTITY_DECIMAL_SI);
                int k = ncm_quantity_parse_flags((const char *)data, size, NCM_QUANTITY_NO_CAP, &nc,
                                                 NULL);
                if (k == 0 && ncm_quantity_cmp(&nc, &q) != 0)
                        abort();
                if (k < 0 && (q.format != NCM_QUANTITY_BINARY_SI ||
                              (ncm_quantity_cmp(&q, &cap) != 0 && ncm_quantity_sign(&q) > 0)))
                        abort();
        }
        ncm_quantity_to_string(&q, text);
        if (strlen(text) >= NCM_QUANTITY_STRLEN)
                abort();
        if (ncm_quantity_parse(text, &back, NULL) < 0 || ncm_quantity_cmp(&q, &back) != 0)
                abort();
        /*
         * The text itself may change once: a binary-SI value without a binary suffix
         * ("312.5Ki" -> "320000") reads back as decimal SI ("320k"). After that it is fixed.
         */
        ncm_quantity_to_string(&back, again);
        if (ncm_quantity_parse(again, &back, NULL) < 0 || ncm_quantity_cmp(&q, &back) != 0 ||
            strcmp(ncm_quantity_to_string(&back, text), again) != 0)
                abort();

        /* Rounding goes away from zero, so Value() and MilliValue() bound q. */
        v = ncm_quantity_value(&q);
        m = ncm_quantity_milli_value(&q);
        if ((ncm_quantity_sign(&q) > 0 && (v < 1 || m < 1)) ||
            (ncm_quantity_sign(&q) < 0 && (v > -1 || m > -1)) ||
            (ncm_quantity_is_zero(&q) && (v != 0 || m != 0)))
                abort();
        (void)ncm_quantity_is_integer(&q);

        r = q;
        if (ncm_quantity_round_up(&r, -3) != (ncm_quantity_cmp(&r, &q) == 0))
                abort();
        if (ncm_quantity_sign(&q) * ncm_quantity_cmp(&r, &q) < 0)
                abort();

        /*
         * q + q - q == q whenever both steps are representable (38 digits at the smaller
         * exponent: the subtraction can fail where the sum did not).
         */
        sum = q;
        if (ncm_quantity_add(&sum, &q) == 0) {
                if (ncm_quantity_sign(&q) != 0 &&
                    ncm_quantity_sign(&q) * ncm_quantity_cmp(&sum, &q) <= 0)
                        abort();
                if (ncm_quantity_sub(&sum, &q) == 0 && ncm_quantity_cmp(&sum, &q) != 0)
                        abort();
        }
        return 0;
}
