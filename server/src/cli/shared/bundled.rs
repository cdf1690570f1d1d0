//! The demo data built into the binary, so that `pivot-lsp score memorycode` and
//! `pivot-lsp model-server` work from any folder with no checkout (after `pip install`):
//! the MemoryCode demo of fixtures/memorycode and the HumanEval demo script of
//! fixtures/model-server. The scorer reads folders, so the MemoryCode files are written
//! to a temporary folder for the run.

use anyhow::{Context, Result};
use std::path::PathBuf;

/// fixtures/model-server/humaneval-demo.json: answers for the first five HumanEval tasks.
pub const HUMANEVAL_DEMO_SCRIPT: &str =
    include_str!("../../../../fixtures/model-server/humaneval-demo.json");

/// Where the model-server's script comes from when none is given (for messages).
pub const HUMANEVAL_DEMO_NAME: &str =
    "the bundled HumanEval demo (fixtures/model-server/humaneval-demo.json)";

macro_rules! fixture {
    ($dir:literal, $name:literal) => {
        (
            $name,
            include_str!(concat!(
                "../../../../fixtures/memorycode/",
                $dir,
                "/",
                $name
            )),
        )
    };
}

/// fixtures/memorycode/dataset.
pub const MEMORYCODE_DATASET: &[(&str, &str)] = &[
    fixture!("dataset", "dialogue_1.json"),
    fixture!("dataset", "dialogue_2.json"),
    fixture!("dataset", "dialogue_211.json"),
];

/// The demo model's folder name (the model name in the scores).
pub const MEMORYCODE_DEMO_MODEL: &str = "demo-model";

/// fixtures/memorycode/outputs/demo-model.
pub const MEMORYCODE_OUTPUTS: &[(&str, &str)] = &[
    fixture!("outputs/demo-model", "output_1.json"),
    fixture!("outputs/demo-model", "output_2.json"),
    fixture!("outputs/demo-model", "output_211.json"),
];

/// The MemoryCode demo written out for one run; removed when dropped.
pub struct MemorycodeDemo {
    _dir: tempfile::TempDir,
    pub dataset: PathBuf,
    pub outputs: PathBuf,
}

pub fn memorycode_demo() -> Result<MemorycodeDemo> {
    let dir = tempfile::Builder::new()
        .prefix("pivot-lsp-demo-")
        .tempdir()
        .context("cannot create a temporary folder for the bundled demo")?;
    let dataset = dir.path().join("dataset");
    let outputs = dir.path().join("outputs").join(MEMORYCODE_DEMO_MODEL);
    for (folder, files) in [
        (&dataset, MEMORYCODE_DATASET),
        (&outputs, MEMORYCODE_OUTPUTS),
    ] {
        std::fs::create_dir_all(folder)
            .with_context(|| format!("cannot create {}", folder.display()))?;
        for (name, text) in files {
            let path = folder.join(name);
            pivot_base::durable::write_atomic(&path, text.as_bytes())?;
        }
    }
    Ok(MemorycodeDemo {
        _dir: dir,
        dataset,
        outputs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Every file of a fixture folder is built in, byte for byte (a file added to the folder
    /// and not here fails this).
    fn same_as_folder(rel: &str, files: &[(&str, &str)]) {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let mut built: Vec<String> = files.iter().map(|(n, _)| n.to_string()).collect();
        built.sort();
        assert_eq!(built, on_disk, "{rel}");
        for (name, text) in files {
            assert_eq!(
                std::fs::read_to_string(dir.join(name)).unwrap(),
                *text,
                "{rel}/{name}"
            );
        }
    }

    #[test]
    fn the_built_in_demo_is_the_fixture_folders() {
        same_as_folder("fixtures/memorycode/dataset", MEMORYCODE_DATASET);
        same_as_folder(
            &format!("fixtures/memorycode/outputs/{MEMORYCODE_DEMO_MODEL}"),
            MEMORYCODE_OUTPUTS,
        );
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/model-server/humaneval-demo.json");
        assert_eq!(
            std::fs::read_to_string(script).unwrap(),
            HUMANEVAL_DEMO_SCRIPT
        );
    }

    #[test]
    fn the_demo_is_written_out_and_removed_after() {
        let demo = memorycode_demo().unwrap();
        let root = demo.dataset.parent().unwrap().to_path_buf();
        assert!(demo.dataset.join("dialogue_211.json").is_file());
        assert!(demo.outputs.ends_with("outputs/demo-model"));
        assert!(demo.outputs.join("output_1.json").is_file());
        drop(demo);
        assert!(!root.exists());
    }
}
