//! `import "x" as x;`: looks for `x.rhai` next to the importing file, then in the
//! extension's folder, then in the extension root, then among the embedded standard modules
//! (`stdlib/rhai/*.rhai`: `path`, `schema`). Modules are compiled once per engine and
//! recorded, so the host can watch the files a script imported.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use ::rhai::{Engine, EvalAltResult, Module, ModuleResolver, Position, Scope, Shared};

type SharedModule = Shared<Module>;

/// The standard modules, by import name.
const STDLIB: &[(&str, &str)] = &[
    ("path", include_str!("../../../stdlib/rhai/path.rhai")),
    ("schema", include_str!("../../../stdlib/rhai/schema.rhai")),
];

/// What the resolver has loaded (shared with the engine).
#[derive(Default)]
pub struct Imports {
    /// Files imported, in first-import order.
    pub files: Vec<PathBuf>,
    modules: HashMap<String, SharedModule>,
    /// Modules being evaluated (to report import cycles).
    loading: Vec<String>,
}

/// The module resolver of one extension.
pub struct Resolver {
    pub ext_dir: PathBuf,
    pub root: PathBuf,
    pub imports: Rc<RefCell<Imports>>,
}

impl Resolver {
    /// The file `path` names, or the stdlib module's source.
    fn locate(&self, source: Option<&str>, path: &str) -> Option<(String, Located)> {
        let rel = if path.ends_with(".rhai") {
            path.to_string()
        } else {
            format!("{path}.rhai")
        };
        let importer_dir = source.and_then(|s| Path::new(s).parent().map(Path::to_path_buf));
        let dirs = importer_dir
            .into_iter()
            .chain([self.ext_dir.clone(), self.root.clone()]);
        for dir in dirs {
            let file = dir.join(&rel);
            if file.is_file() {
                let key = file.to_string_lossy().into_owned();
                return Some((key, Located::File(file)));
            }
        }
        STDLIB
            .iter()
            .find(|(name, _)| *name == path)
            .map(|(name, text)| (format!("<stdlib>/{name}.rhai"), Located::Std(text)))
    }
}

enum Located {
    File(PathBuf),
    Std(&'static str),
}

impl ModuleResolver for Resolver {
    fn resolve(
        &self,
        engine: &Engine,
        source: Option<&str>,
        path: &str,
        pos: Position,
    ) -> Result<SharedModule, Box<EvalAltResult>> {
        let (key, located) = self
            .locate(source, path)
            .ok_or_else(|| EvalAltResult::ErrorModuleNotFound(path.to_string(), pos))?;
        if let Some(m) = self.imports.borrow().modules.get(&key) {
            return Ok(m.clone());
        }
        if self.imports.borrow().loading.contains(&key) {
            return Err(EvalAltResult::ErrorInModule(
                key,
                super::convert::script_err("import cycle"),
                pos,
            )
            .into());
        }
        let text = match located {
            Located::File(file) => {
                self.imports.borrow_mut().files.push(file.clone());
                std::fs::read_to_string(&file).map_err(|e| {
                    let msg = format!("cannot read {}: {e}", file.display());
                    EvalAltResult::ErrorInModule(key.clone(), super::convert::script_err(msg), pos)
                })?
            }
            Located::Std(text) => text.to_string(),
        };
        self.imports.borrow_mut().loading.push(key.clone());
        let module = compile_module(engine, &key, &text, pos);
        let mut imports = self.imports.borrow_mut();
        imports.loading.retain(|k| *k != key);
        let module = module?;
        imports.modules.insert(key, module.clone());
        Ok(module)
    }
}

fn compile_module(
    engine: &Engine,
    key: &str,
    text: &str,
    pos: Position,
) -> Result<SharedModule, Box<EvalAltResult>> {
    let wrap = |e: Box<EvalAltResult>| -> Box<EvalAltResult> {
        EvalAltResult::ErrorInModule(key.to_string(), e, pos).into()
    };
    let mut ast = engine.compile(text).map_err(|e| wrap(e.into()))?;
    ast.set_source(key);
    let mut module = Module::eval_ast_as_new(Scope::new(), &ast, engine).map_err(wrap)?;
    module.build_index();
    Ok(Shared::new(module))
}
