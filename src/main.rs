fn main() {
    let p = std::env::args().nth(1).unwrap();
    match warpcheck::ir::llvm::load_file(std::path::Path::new(&p)) {
        Ok(m) => { print!("{m}"); for f in &m.funcs { println!("{} kernel={} {:?} params={:?} loc={:?}", f.name, f.is_kernel, f.launch, f.params, f.loc); } println!("{:?}", m.files); println!("{:?}", &m.locs[..3]); }
        Err(e) => { eprintln!("{e} line={:?}", e.line); std::process::exit(2) }
    }
}
