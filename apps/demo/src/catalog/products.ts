export interface Product {
  readonly sku: string;
  readonly name: string;
  readonly price: number;
}

/** The catalog itself is local data; only stock comes from the (simulated) inventory backend. */
export const PRODUCTS: readonly Product[] = Object.freeze([
  { sku: 'anchor-01', name: 'Galvanised anchor, 10 kg', price: 129 },
  { sku: 'rope-12', name: 'Mooring rope, 12 mm (per m)', price: 3.5 },
  { sku: 'fender-xl', name: 'Fender XL', price: 45 },
  { sku: 'ballast-5', name: 'Lead ballast, 5 kg', price: 22 },
]);
