//! "Did you mean": the honoured key nearest to a key the file has but nobody reads (a typo such
//! as `adress` would otherwise be ignored silently).

/// The keys of a server section this crate reads.
pub(super) const SECTION_KEYS: &[&str] = &[
    "address",
    "masterAddress",
    "nodeAddresses",
    "sentinelAddresses",
    "masterName",
    "sentinelUsername",
    "sentinelPassword",
    "username",
    "password",
    "database",
    "timeout",
    "connectTimeout",
    "subscriptionTimeout",
    "retryAttempts",
    "retryInterval",
    "retryDelay",
    "scanInterval",
    "shardedSubscriptionMode",
    "nameMapper",
    "commandMapper",
    "credentialsResolver",
    "natMapper",
];

/// The key of `known` that `key` most likely misspells: at most two edits away (ignoring case),
/// and not itself one of them.
pub(super) fn nearest(key: &str, known: &[&'static str]) -> Option<&'static str> {
    let k = key.to_ascii_lowercase();
    known
        .iter()
        .filter(|c| **c != key)
        .map(|c| (distance(&k, &c.to_ascii_lowercase()), *c))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance (the keys are short).
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(here + 1);
            prev = here;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_find_their_key_and_real_keys_find_none() {
        assert_eq!(nearest("adress", SECTION_KEYS), Some("address"));
        assert_eq!(nearest("Address", SECTION_KEYS), Some("address"));
        assert_eq!(nearest("nodeAdresses", SECTION_KEYS), Some("nodeAddresses"));
        assert_eq!(nearest("timeout", SECTION_KEYS), None);
        assert_eq!(nearest("connectionPoolSize", SECTION_KEYS), None);
        assert_eq!(nearest("clientName", SECTION_KEYS), None);
    }
}
