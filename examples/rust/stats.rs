// Try fastedit here (see examples/README.md): Fix syntax on the line the editor marks.

fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some(values.iter().sum::<f64>() / values.len() as f64)
}

fn main() {
    let values = vec![1.0, 2.0, 3.0];
    println!("{:?}", mean(&values)
}
