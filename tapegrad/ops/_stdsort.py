"""The order in which libstdc++'s `std::sort` leaves equal keys.

torch's CPU `mode` kernel sorts (value, index) pairs by value alone with `std::sort`
(introsort: median-of-three quicksort down to runs of 16, a heapsort fallback after
2*log2(n) levels, then insertion sort) and reports the index at the end of the mode's
run. std::sort is not stable, so which index that is follows from the algorithm's
exact steps, which this module repeats (written from the algorithm's description in
libstdc++'s <bits/stl_algo.h> and <bits/stl_heap.h>; checked against the compiled
std::sort and std::partial_sort on 400 random arrays when written, and against torch's
mode in tests/test_statistics_functions.py). Pure Python: used only where the answer
depends on it (a repeated mode in a row longer than 16).
"""
import math

_THRESHOLD = 16  # libstdc++'s _S_threshold


def std_sort_order(keys, depth=None):
    """The permutation std::sort(pairs, by key) leaves: `order[i]` is the original
    position of the i-th element after sorting. `depth`: the introsort depth limit
    (default libstdc++'s 2*log2(n); 0 runs the heapsort fallback at once, which is
    std::partial_sort(first, last, last)'s order)."""
    n = len(keys)
    a = list(range(n))

    def less(i, j):
        return keys[i] < keys[j]

    def insertion_sort(first, last):
        for i in range(first + 1, last):
            v = a[i]
            if less(v, a[first]):
                a[first + 1:i + 1] = a[first:i]
                a[first] = v
            else:
                unguarded_linear_insert(i)

    def unguarded_linear_insert(i):
        v = a[i]
        while less(v, a[i - 1]):
            a[i] = a[i - 1]
            i -= 1
        a[i] = v

    def median_to_first(result, x, y, z):
        if less(a[x], a[y]):
            m = y if less(a[y], a[z]) else (z if less(a[x], a[z]) else x)
        else:
            m = x if less(a[x], a[z]) else (z if less(a[y], a[z]) else y)
        a[result], a[m] = a[m], a[result]

    def unguarded_partition(first, last, pivot):
        while True:
            while less(a[first], a[pivot]):
                first += 1
            last -= 1
            while less(a[pivot], a[last]):
                last -= 1
            if not first < last:
                return first
            a[first], a[last] = a[last], a[first]
            first += 1

    def adjust_heap(first, hole, length, value):
        top = second = hole
        while second < (length - 1) // 2:
            second = 2 * (second + 1)
            if less(a[first + second], a[first + second - 1]):
                second -= 1
            a[first + hole] = a[first + second]
            hole = second
        if length % 2 == 0 and second == (length - 2) // 2:
            second = 2 * (second + 1)
            a[first + hole] = a[first + second - 1]
            hole = second - 1
        parent = (hole - 1) // 2
        while hole > top and less(a[first + parent], value):
            a[first + hole] = a[first + parent]
            hole = parent
            parent = (hole - 1) // 2
        a[first + hole] = value

    def heap_sort(first, last):  # std::partial_sort(first, last, last)
        length = last - first
        if length >= 2:
            for parent in range((length - 2) // 2, -1, -1):
                adjust_heap(first, parent, length, a[first + parent])
        while last - first > 1:
            last -= 1
            value = a[last]
            a[last] = a[first]
            adjust_heap(first, 0, last - first, value)

    def introsort_loop(first, last, depth):
        stack = [(first, last, depth)]  # the right-hand recursion, made explicit
        while stack:
            first, last, depth = stack.pop()
            while last - first > _THRESHOLD:
                if depth == 0:
                    heap_sort(first, last)
                    break
                depth -= 1
                median_to_first(first, first + 1, first + (last - first) // 2, last - 1)
                cut = unguarded_partition(first + 1, last, first)
                stack.append((cut, last, depth))
                # libstdc++ recurses on the right part first, then loops on the left;
                # the parts are disjoint, so the order they are sorted in does not matter
                last = cut

    if n > 1:
        introsort_loop(0, n, 2 * int(math.floor(math.log2(n))) if depth is None else depth)
        if n > _THRESHOLD:
            insertion_sort(0, _THRESHOLD)
            for i in range(_THRESHOLD, n):
                unguarded_linear_insert(i)
        else:
            insertion_sort(0, n)
    return a
