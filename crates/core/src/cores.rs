//! CPU-bound work spread over every core with scoped threads (no pool, no dependency).

/// Maps `f` over `items` on every core and returns the results in the order of `items`.
/// Item `i` goes to thread `i mod n`, so neighbouring items, often alike in cost, are shared out.
/// A panic in `f` is resumed on the caller's thread.
pub fn map_on_cores<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    if threads < 2 || items.len() < 2 {
        return items.iter().map(f).collect();
    }
    let f = &f;
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    items
                        .iter()
                        .enumerate()
                        .skip(t)
                        .step_by(threads)
                        .map(|(i, item)| (i, f(item)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_order_of_the_items() {
        let items: Vec<u64> = (0..1_001).collect();
        let squares = map_on_cores(&items, |x| x * x);
        assert_eq!(squares.len(), items.len());
        assert!(
            squares
                .iter()
                .enumerate()
                .all(|(i, s)| *s == (i * i) as u64)
        );
        assert_eq!(map_on_cores(&[] as &[u8], |x| *x), Vec::<u8>::new());
    }
}
