// Try fastedit here (see examples/README.md): Fix syntax on the line the editor marks.

interface Rectangle {
  width: number;
  height: number;
}

export function area(shape: Rectangle): number {
  return shape.width * shape.height
}

export function perimeter(shape: Rectangle): number {
  return 2 * (shape.width + shape.height;
}
