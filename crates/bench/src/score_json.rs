//! Reading a score file's JSON into its type, for both benchmarks' score files: the message
//! names the JSON path of the first problem, not the file, which the caller knows.

/// `raw` as `T`, or why it is not a score file (with the path of the first wrong key).
pub fn typed<T: serde::de::DeserializeOwned>(raw: &serde_json::Value) -> Result<T, String> {
    serde_path_to_error::deserialize(raw).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            format!("not a score file: {inner}")
        } else {
            format!("not a score file: at {path}: {inner}")
        }
    })
}
