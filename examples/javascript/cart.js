// Try fastedit here (see examples/README.md): Fix syntax on the line the editor marks.

function itemTotal(item) {
  return item.price * item.quantity;
}

function cartTotal(items) {
  let sum = 0;
  for (const item of items) {
    sum += itemTotal(item;
  }
  return sum;
}

module.exports = { itemTotal, cartTotal };
