/* SPDX-License-Identifier: Apache-2.0 */
/* The kubelet's CPU conversions (helpers_linux.go, cgroup_manager_linux.go, cm/util). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include <nodecm/cgroups.h>

uint64_t ncm_cgroup_millicpu_to_shares(int64_t milli)
{
        int64_t shares;

        if (milli == 0)
                return NCM_CGROUP_MIN_SHARES;
        /* Go wraps on overflow; a request that large can only mean "as many as possible". */
        if (__builtin_mul_overflow(milli, (int64_t)NCM_CGROUP_SHARES_PER_CPU, &shares))
                return milli > 0 ? NCM_CGROUP_MAX_SHARES : NCM_CGROUP_MIN_SHARES;
        shares /= NCM_CGROUP_MILLICPU_TO_CPU;
        if (shares < NCM_CGROUP_MIN_SHARES)
                return NCM_CGROUP_MIN_SHARES;
        if (shares > NCM_CGROUP_MAX_SHARES)
                return NCM_CGROUP_MAX_SHARES;
        return (uint64_t)shares;
}

int64_t ncm_cgroup_millicpu_to_quota(int64_t milli, int64_t period, bool custom_period)
{
        int64_t quota;

        if (milli == 0)
                return 0;
        if (!custom_period)
                period = NCM_CGROUP_QUOTA_PERIOD;
        if (__builtin_mul_overflow(milli, period, &quota))
                return (milli > 0) == (period > 0) ? INT64_MAX : NCM_CGROUP_MIN_QUOTA_PERIOD;
        quota /= NCM_CGROUP_MILLICPU_TO_CPU;
        if (quota < NCM_CGROUP_MIN_QUOTA_PERIOD)
                quota = NCM_CGROUP_MIN_QUOTA_PERIOD;
        return quota;
}

int64_t ncm_cgroup_shares_to_millicpu(int64_t shares)
{
        if (shares < NCM_CGROUP_MIN_SHARES)
                return 0;
        /* Integer ceiling of shares*1000/1024; the kubelet goes through float64, which is
         * exact for every shares value a cgroup can hold (<= 262144). */
        if (shares > INT64_MAX / NCM_CGROUP_MILLICPU_TO_CPU)
                return INT64_MAX / NCM_CGROUP_SHARES_PER_CPU;
        return (shares * NCM_CGROUP_MILLICPU_TO_CPU + NCM_CGROUP_SHARES_PER_CPU - 1) /
               NCM_CGROUP_SHARES_PER_CPU;
}

int64_t ncm_cgroup_quota_to_millicpu(int64_t quota, int64_t period)
{
        int64_t m;

        if (quota == -1 || period <= 0)
                return 0;
        if (__builtin_mul_overflow(quota, (int64_t)NCM_CGROUP_MILLICPU_TO_CPU, &m))
                return quota > 0 ? INT64_MAX / period : 0;
        return m / period;
}

uint64_t ncm_cgroup_shares_to_weight(uint64_t shares)
{
        if (shares == 0)
                return 0;
        if (shares >= NCM_CGROUP_MAX_SHARES)
                return NCM_CGROUP_MAX_WEIGHT;
        /* Go computes (shares-2) on uint64 and would wrap for shares < 2; such values never
         * reach it (MilliCPUToShares clamps at 2), so treat them as the minimum. */
        if (shares < NCM_CGROUP_MIN_SHARES)
                shares = NCM_CGROUP_MIN_SHARES;
        return 1 + ((shares - 2) * 9999) / 262142;
}

uint64_t ncm_cgroup_weight_to_shares(uint64_t weight)
{
        if (weight == 0)
                return 0;
        if (weight > NCM_CGROUP_MAX_WEIGHT)
                weight = NCM_CGROUP_MAX_WEIGHT;
        return ((weight - 1) * 262142) / 9999 + 2;
}

uint64_t ncm_cgroup_shares_to_weight_oci(uint64_t shares)
{
        double l, exponent;

        if (shares == 0)
                return 0;
        if (shares <= 2)
                return 1;
        if (shares >= NCM_CGROUP_MAX_SHARES)
                return NCM_CGROUP_MAX_WEIGHT;
        /* Quadratic in log2(shares) through (2, 1), (1024, 100) and (262144, 10000). */
        l = log2((double)shares);
        exponent = (l * l + 125 * l) / 612.0 - 7.0 / 34.0;
        return (uint64_t)ceil(pow(10, exponent));
}

int ncm_cgroup_hugepage_size_name(int64_t page_size, char *buf, size_t size)
{
        static const char *const units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
        size_t idx = 0;
        int n;

        if (page_size <= 0)
                return -EINVAL;
        while (page_size % 1024 == 0 && idx < NCM_ELEMENTSOF(units) - 1) {
                page_size /= 1024;
                idx++;
        }
        if (page_size > 1024 && idx < NCM_ELEMENTSOF(units) - 1)
                return -EINVAL;
        n = snprintf(buf, size, "%" PRId64 "%s", page_size, units[idx]);
        if (n < 0 || (size_t)n >= size)
                return -ENAMETOOLONG;
        return 0;
}
