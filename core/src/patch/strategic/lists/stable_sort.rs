//! Go's `sort.SliceStable` (insertion sort over blocks of 20, then in-place symmetric
//! merges), step for step. Upstream orders merged lists with a comparison that is not
//! a strict order when an item is missing from the order it sorts by; only the same
//! algorithm gives the same result then. With a proper order it is a stable sort.

const BLOCK: usize = 20;

pub(super) fn sort<T>(data: &mut [T], less: impl Fn(&T, &T) -> bool) {
    let n = data.len();
    let less = |data: &[T], i: usize, j: usize| less(&data[i], &data[j]);
    let mut block = BLOCK;
    let (mut a, mut b) = (0, block);
    while b <= n {
        insertion_sort(data, a, b, &less);
        a = b;
        b += block;
    }
    insertion_sort(data, a, n, &less);
    while block < n {
        let (mut a, mut b) = (0, 2 * block);
        while b <= n {
            sym_merge(data, a, a + block, b, &less);
            a = b;
            b += 2 * block;
        }
        let m = a + block;
        if m < n {
            sym_merge(data, a, m, n, &less);
        }
        block *= 2;
    }
}

fn insertion_sort<T>(
    data: &mut [T],
    a: usize,
    b: usize,
    less: &impl Fn(&[T], usize, usize) -> bool,
) {
    for i in a + 1..b {
        let mut j = i;
        while j > a && less(data, j, j - 1) {
            data.swap(j, j - 1);
            j -= 1;
        }
    }
}

/// Merge the sorted runs `data[a..m]` and `data[m..b]` in place.
fn sym_merge<T>(
    data: &mut [T],
    a: usize,
    m: usize,
    b: usize,
    less: &impl Fn(&[T], usize, usize) -> bool,
) {
    if m - a == 1 {
        // One item on the left: binary search its place on the right, then rotate it in.
        let (mut i, mut j) = (m, b);
        while i < j {
            let h = (i + j) / 2;
            if less(data, h, a) {
                i = h + 1;
            } else {
                j = h;
            }
        }
        for k in a..i.saturating_sub(1) {
            data.swap(k, k + 1);
        }
        return;
    }
    if b - m == 1 {
        let (mut i, mut j) = (a, m);
        while i < j {
            let h = (i + j) / 2;
            if !less(data, m, h) {
                i = h + 1;
            } else {
                j = h;
            }
        }
        let mut k = m;
        while k > i {
            data.swap(k, k - 1);
            k -= 1;
        }
        return;
    }
    let mid = (a + b) / 2;
    let n = mid + m;
    let (mut start, mut r) = if m > mid { (n - b, mid) } else { (a, m) };
    let p = n - 1;
    while start < r {
        let c = (start + r) / 2;
        if !less(data, p - c, c) {
            start = c + 1;
        } else {
            r = c;
        }
    }
    let end = n - start;
    if start < m && m < end {
        rotate(data, start, m, end);
    }
    if a < start && start < mid {
        sym_merge(data, a, start, mid, less);
    }
    if mid < end && end < b {
        sym_merge(data, mid, end, b, less);
    }
}

/// Swap the blocks `data[a..m]` and `data[m..b]` (Go's swap-based rotation).
fn rotate<T>(data: &mut [T], a: usize, m: usize, b: usize) {
    let (mut i, mut j) = (m - a, b - m);
    while i != j {
        if i > j {
            swap_range(data, m - i, m, j);
            i -= j;
        } else {
            swap_range(data, m - i, m + j - i, i);
            j -= i;
        }
    }
    swap_range(data, m - i, m, i);
}

fn swap_range<T>(data: &mut [T], a: usize, b: usize, n: usize) {
    for i in 0..n {
        data.swap(a + i, b + i);
    }
}

#[cfg(test)]
mod tests {
    use super::sort;

    #[test]
    fn sorts_stably_across_blocks() {
        // 100 items, keys repeating: equal keys keep their input order.
        let mut items: Vec<(u32, usize)> = (0..100).map(|i| ((i * 37 % 11) as u32, i)).collect();
        let mut want = items.clone();
        want.sort_by_key(|&(k, _)| k);
        sort(&mut items, |a, b| a.0 < b.0);
        assert_eq!(items, want);
    }

    #[test]
    fn an_always_less_comparison_reverses_small_runs() {
        // Insertion sort swaps whenever `less` says so: the run comes out reversed.
        let mut items = vec![1, 2, 3, 4];
        sort(&mut items, |_, _| true);
        assert_eq!(items, vec![4, 3, 2, 1]);
    }
}
