"""Which of several equal elements torch's CPU kthvalue, topk and mode return.

All three are unstable: kthvalue runs torch's own quickselect (median of three,
Sedgewick's partition); topk runs the C++ standard library's nth_element + sort, or
partial_sort when k * 64 <= n (libstdc++'s introselect, introsort and heap algorithms);
mode sorts (value, index) pairs by value with std::sort and reports the index at the end
of the mode's run. Where a row holds equal values, the index each returns depends on the
order those algorithms move elements in. They are replayed here on the ranks of a row's
values (NaN ranks highest, as torch orders it), so tapegrad returns the same indices;
rows without ties in the selected values never get here (ops/sorting.py and mode check).
"""


def ranks_largest_first(ranks, largest):
    """Keys compared with `<` in the order topk's comparator sorts them."""
    return [-r for r in ranks] if largest else list(ranks)


# ---- torch's quickselect (kthvalue) ----------------------------------------------------
def kth_position(ranks, k):
    """The original position of the element quickselect leaves at index k (0-based)."""
    keys, pos = list(ranks), list(range(len(ranks)))

    def swap(i, j):
        keys[i], keys[j] = keys[j], keys[i]
        pos[i], pos[j] = pos[j], pos[i]

    lo, hi = 0, len(keys) - 1
    while hi > lo:
        if hi == lo + 1:
            if keys[lo] > keys[hi]:
                swap(lo, hi)
            break
        swap((lo + hi) >> 1, lo + 1)  # median of three to keys[lo]
        if keys[lo + 1] > keys[hi]:
            swap(lo + 1, hi)
        if keys[lo] > keys[hi]:
            swap(lo, hi)
        if keys[lo + 1] > keys[lo]:
            swap(lo + 1, lo)
        i, j, piv = lo + 1, hi, keys[lo]
        while True:
            i += 1
            while piv > keys[i]:
                i += 1
            j -= 1
            while keys[j] > piv:
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return pos[k]


# ---- the C++ standard library's selection and sorting (topk) ----------------------------
def _median_to_first(a, result, i, j, k):
    x, y, z = a[i][0], a[j][0], a[k][0]
    if x < y:
        t = j if y < z else (k if x < z else i)
    else:
        t = i if x < z else (k if y < z else j)
    a[result], a[t] = a[t], a[result]


def _partition(a, first, last):
    """Median-of-three pivot moved to a[first], then the unguarded partition of the rest;
    returns the cut."""
    _median_to_first(a, first, first + 1, first + (last - first) // 2, last - 1)
    pivot = a[first][0]
    lo, hi = first + 1, last
    while True:
        while a[lo][0] < pivot:
            lo += 1
        hi -= 1
        while pivot < a[hi][0]:
            hi -= 1
        if not lo < hi:
            return lo
        a[lo], a[hi] = a[hi], a[lo]
        lo += 1


def _linear_insert(a, last):
    value = a[last]
    prev = last - 1
    while value[0] < a[prev][0]:
        a[last] = a[prev]
        last, prev = prev, prev - 1
    a[last] = value


def _insertion_sort(a, first, last):
    for i in range(first + 1, last):
        value = a[i]
        if value[0] < a[first][0]:
            a[first + 1:i + 1] = a[first:i]
            a[first] = value
        else:
            _linear_insert(a, i)


def _adjust_heap(a, first, hole, length, value):
    top = child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if a[first + child][0] < a[first + child - 1][0]:
            child -= 1
        a[first + hole] = a[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        a[first + hole] = a[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and a[first + parent][0] < value[0]:
        a[first + hole] = a[first + parent]
        hole, parent = parent, (parent - 1) // 2
    a[first + hole] = value


def _pop_heap(a, first, last, result):
    value = a[result]
    a[result] = a[first]
    _adjust_heap(a, first, 0, last - first, value)


def _heap_select(a, first, middle, last):
    n = middle - first
    if n >= 2:
        for parent in range((n - 2) // 2, -1, -1):
            _adjust_heap(a, first, parent, n, a[first + parent])
    for i in range(middle, last):
        if a[i][0] < a[first][0]:
            _pop_heap(a, first, middle, i)


def _partial_sort(a, first, middle, last):
    _heap_select(a, first, middle, last)
    while middle - first > 1:
        middle -= 1
        _pop_heap(a, first, middle, middle)


def _nth_element(a, nth):
    first, last = 0, len(a)
    if nth == last:
        return
    depth = 2 * (len(a).bit_length() - 1)
    while last - first > 3:
        if depth == 0:
            _heap_select(a, first, nth + 1, last)
            a[first], a[nth] = a[nth], a[first]
            return
        depth -= 1
        cut = _partition(a, first, last)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(a, first, last)


def _sort(a, first, last):
    if last - first < 2:
        return
    # introsort: the right parts wait on a stack (they are disjoint, so the order in
    # which they are sorted does not change the result)
    todo = [(first, last, 2 * ((last - first).bit_length() - 1))]
    while todo:
        lo, hi, depth = todo.pop()
        while hi - lo > 16:
            if depth == 0:
                _partial_sort(a, lo, hi, hi)
                break
            depth -= 1
            cut = _partition(a, lo, hi)
            todo.append((cut, hi, depth))
            hi = cut
    if last - first > 16:
        _insertion_sort(a, first, first + 16)
        for i in range(first + 16, last):
            _linear_insert(a, i)
    else:
        _insertion_sort(a, first, last)


def topk_positions(ranks, k, largest, sorted):
    """The original positions of the k elements topk returns, in its order."""
    a = [(key, j) for j, key in enumerate(ranks_largest_first(ranks, largest))]
    if k * 64 <= len(a):
        _partial_sort(a, 0, k, len(a))
    else:
        _nth_element(a, k - 1)
        if sorted:
            _sort(a, 0, k - 1)
    return [j for _, j in a[:k]]


def std_sort_order(keys):
    """The permutation std::sort of (key, position) pairs by key leaves: `order[i]` is the
    original position of the i-th element after sorting (mode's tie index)."""
    a = [(key, j) for j, key in enumerate(keys)]
    _sort(a, 0, len(a))
    return [j for _, j in a]
