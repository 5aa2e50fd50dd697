//! What takes the space in a store (issue #46): every table's entries and bytes, and the
//! derived table's by namespace (facts, the graph, ...), read by walking each table once. A
//! record held apart counts its reference; the bytes it names count under `bodies`.
use super::*;

/// The entries of one table, or of one namespace of the derived table, and their bytes (keys
/// and values as stored, packed where they are and the tree's in blocks: before the engine's
/// own overhead).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Space {
    /// The table's name (`frames`, `nodes`, ...), or `derived:NAMESPACE`.
    pub kind: String,
    pub entries: u64,
    pub key_bytes: u64,
    pub value_bytes: u64,
}

impl Space {
    fn new(kind: String) -> Space {
        Space {
            kind,
            entries: 0,
            key_bytes: 0,
            value_bytes: 0,
        }
    }

    fn add(&mut self, key: &[u8], value: &[u8]) {
        self.entries += 1;
        self.key_bytes += key.len() as u64;
        self.value_bytes += value.len() as u64;
    }
}

impl Store {
    /// Every table's entries and bytes, in the tables' fixed order, then the derived table's
    /// namespaces (a derived key is its namespace, a 0 byte and a hash), largest first.
    pub fn space(&self) -> Result<Vec<Space>> {
        let mut out = Vec::new();
        let mut derived: BTreeMap<Vec<u8>, Space> = BTreeMap::new();
        for table in Table::ALL {
            let mut space = Space::new(table.name().to_owned());
            self.engine.scan_stored(table, b"", &mut |k, v| {
                space.add(k, v);
                if table == Table::Derived {
                    let namespace = k.split(|b| *b == 0).next().unwrap_or(k);
                    derived
                        .entry(namespace.to_vec())
                        .or_insert_with(|| {
                            Space::new(format!("derived:{}", String::from_utf8_lossy(namespace)))
                        })
                        .add(k, v);
                }
                true
            })?;
            // Entries, however the engine keeps them (the tree's in blocks).
            space.entries = self.engine.count(table)?;
            out.push(space);
        }
        let mut namespaces: Vec<Space> = derived.into_values().collect();
        namespaces.sort_by_key(|s| std::cmp::Reverse(s.key_bytes + s.value_bytes));
        out.extend(namespaces);
        Ok(out)
    }
}
