CREATE TABLE products (
  id INTEGER PRIMARY KEY,
  sku TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  category TEXT NOT NULL,
  price INTEGER NOT NULL,
  stock INTEGER NOT NULL DEFAULT 0,
  rating REAL NOT NULL DEFAULT 0,
  description TEXT NOT NULL DEFAULT ''
);
CREATE TABLE coupons (
  id INTEGER PRIMARY KEY,
  code TEXT NOT NULL UNIQUE,
  percent_off INTEGER NOT NULL,
  min_subtotal INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE cart_items (
  id INTEGER PRIMARY KEY,
  product_id INTEGER NOT NULL REFERENCES products(id),
  qty INTEGER NOT NULL
);
CREATE TABLE checkout (
  id INTEGER PRIMARY KEY,
  coupon TEXT NOT NULL DEFAULT '',
  customer_name TEXT NOT NULL DEFAULT '',
  address TEXT NOT NULL DEFAULT '',
  city TEXT NOT NULL DEFAULT '',
  postcode TEXT NOT NULL DEFAULT ''
);
CREATE TABLE orders (
  id INTEGER PRIMARY KEY,
  placed_on TEXT NOT NULL DEFAULT '',
  customer_name TEXT NOT NULL,
  address TEXT NOT NULL,
  city TEXT NOT NULL,
  postcode TEXT NOT NULL,
  coupon TEXT NOT NULL DEFAULT '',
  subtotal INTEGER NOT NULL,
  discount INTEGER NOT NULL DEFAULT 0,
  total INTEGER NOT NULL,
  status TEXT NOT NULL DEFAULT 'placed',
  reviewed INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE order_items (
  id INTEGER PRIMARY KEY,
  order_id INTEGER NOT NULL REFERENCES orders(id),
  product_id INTEGER NOT NULL REFERENCES products(id),
  qty INTEGER NOT NULL,
  price INTEGER NOT NULL
);
CREATE TABLE wishlist (
  id INTEGER PRIMARY KEY,
  product_id INTEGER NOT NULL UNIQUE REFERENCES products(id)
);
CREATE TABLE returns (
  id INTEGER PRIMARY KEY,
  order_id INTEGER NOT NULL REFERENCES orders(id),
  order_item_id INTEGER NOT NULL UNIQUE REFERENCES order_items(id),
  reason TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'requested'
);
CREATE TABLE settings (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  value TEXT NOT NULL DEFAULT ''
);

INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (1, 'FTW-6062', 'Zephyr Trail Shoes (Blue)', 'Footwear', 13849, 24, 3.6, 'The Zephyr trail shoes in blue: backed by a two-year warranty.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (2, 'CBL-1604', 'Drift HDMI Cable (1 m)', 'Cables', 749, 31, 3.7, 'The Drift hdmi cable in 1 m: a customer favourite.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (3, 'CBL-7384', 'Orbit Lightning Cable (1 m)', 'Cables', 899, 24, 2.6, 'The Orbit lightning cable in 1 m: light, tough and easy to pack.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (4, 'AUD-6494', 'Horizon Earbuds (Red)', 'Headphones', 19599, 36, 4.2, 'The Horizon earbuds in red: made to last season after season.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (5, 'BAG-5901', 'Ember Daypack (Grey)', 'Backpacks', 20500, 6, 3.5, 'The Ember daypack in grey: compact and dependable.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (6, 'BAG-3407', 'Willow Daypack (Grey)', 'Backpacks', 11299, 16, 3.8, 'The Willow daypack in grey: built for long days outdoors.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (7, 'BAG-8787', 'Juniper Backpack (Orange)', 'Backpacks', 9849, 32, 4.5, 'The Juniper backpack in orange: our best value pick.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (8, 'FTW-4856', 'Alpine Sandals (Navy)', 'Footwear', 16599, 26, 4.0, 'The Alpine sandals in navy: designed with recycled materials.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (9, 'FTW-7155', 'Lumen Hiking Boots (Navy)', 'Footwear', 7849, 39, 4.9, 'The Lumen hiking boots in navy: our best value pick.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (10, 'BAG-5970', 'Willow Backpack (Black)', 'Backpacks', 9599, 7, 4.0, 'The Willow backpack in black: designed with recycled materials.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (11, 'BAG-6510', 'Trail Backpack (White)', 'Backpacks', 15700, 15, 4.4, 'The Trail backpack in white: backed by a two-year warranty.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (12, 'FTW-9457', 'Lumen Hiking Boots (Black)', 'Footwear', 16399, 23, 4.0, 'The Lumen hiking boots in black: designed with recycled materials.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (13, 'KIT-1351', 'Vista Chef Knife (Titanium)', 'Kitchen', 9200, 29, 3.5, 'The Vista chef knife in titanium: our best value pick.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (14, 'BAG-5364', 'Cirrus Daypack (Olive)', 'Backpacks', 8699, 24, 3.7, 'The Cirrus daypack in olive: compact and dependable.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (15, 'FTW-9214', 'Ridge Sandals (Red)', 'Footwear', 19400, 37, 4.0, 'The Ridge sandals in red: built for long days outdoors.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (16, 'BTL-8008', 'Sierra Water Bottle (Navy)', 'Bottles', 2199, 22, 4.3, 'The Sierra water bottle in navy: a customer favourite.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (17, 'BAG-1013', 'Canyon Backpack (Black)', 'Backpacks', 10400, 27, 3.8, 'The Canyon backpack in black: designed with recycled materials.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (18, 'BTL-1541', 'Horizon Thermos Flask (White)', 'Bottles', 1100, 9, 3.9, 'The Horizon thermos flask in white: designed with recycled materials.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (19, 'FTW-1232', 'Harbor Sandals (Blue)', 'Footwear', 5149, 0, 4.1, 'The Harbor sandals in blue: backed by a two-year warranty.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (20, 'FTW-2667', 'Lumen Lite Hiking Boots (White)', 'Footwear', 10500, 21, 4.6, 'The Lumen Lite hiking boots in white: compact and dependable.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (21, 'BAG-9546', 'Zephyr Backpack (White)', 'Backpacks', 15699, 12, 4.4, 'The Zephyr backpack in white: made to last season after season.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (22, 'LMP-5803', 'Fjord Camp Lantern (White)', 'Lamps', 5449, 8, 3.7, 'The Fjord camp lantern in white: compact and dependable.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (23, 'BAG-4360', 'Nomad Daypack (Grey)', 'Backpacks', 12749, 6, 4.5, 'The Nomad daypack in grey: made to last season after season.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (24, 'BAG-1611', 'Basalt Daypack (Green)', 'Backpacks', 3749, 0, 4.3, 'The Basalt daypack in green: designed with recycled materials.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (25, 'LMP-9012', 'Cascade Camp Lantern (White)', 'Lamps', 7999, 13, 3.1, 'The Cascade camp lantern in white: made to last season after season.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (26, 'FTW-5302', 'Lumen Hiking Boots (White)', 'Footwear', 7900, 4, 2.7, 'The Lumen hiking boots in white: a customer favourite.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (27, 'BAG-4303', 'Vista Backpack (Navy)', 'Backpacks', 17999, 0, 3.3, 'The Vista backpack in navy: made to last season after season.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (28, 'AUD-6886', 'Glacier Earbuds (Red)', 'Headphones', 16449, 4, 3.7, 'The Glacier earbuds in red: light, tough and easy to pack.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (29, 'BAG-7236', 'Basalt Daypack (Yellow)', 'Backpacks', 14600, 15, 3.2, 'The Basalt daypack in yellow: light, tough and easy to pack.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (30, 'KIT-2146', 'Cirrus Chef Knife (Black)', 'Kitchen', 5400, 36, 4.4, 'The Cirrus chef knife in black: made to last season after season.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (31, 'LMP-2718', 'Arcline Camp Lantern (Green)', 'Lamps', 7100, 32, 3.7, 'The Arcline camp lantern in green: light, tough and easy to pack.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (32, 'BAG-7484', 'Summit Daypack (Olive)', 'Backpacks', 11849, 9, 4.1, 'The Summit daypack in olive: built for long days outdoors.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (33, 'BAG-9496', 'Zephyr Backpack (Olive)', 'Backpacks', 10000, 13, 3.5, 'The Zephyr backpack in olive: our best value pick.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (34, 'BAG-4148', 'Arcline Daypack (Blue)', 'Backpacks', 18949, 14, 3.6, 'The Arcline daypack in blue: compact and dependable.');
INSERT INTO products (id, sku, name, category, price, stock, rating, description) VALUES (35, 'BAG-7365', 'Summit Duffel Bag (Red)', 'Backpacks', 7349, 36, 3.9, 'The Summit duffel bag in red: backed by a two-year warranty.');
INSERT INTO coupons (id, code, percent_off, min_subtotal) VALUES (1, 'GOLD35', 35, 150000);
INSERT INTO coupons (id, code, percent_off, min_subtotal) VALUES (2, 'FRIEND10', 10, 0);
INSERT INTO coupons (id, code, percent_off, min_subtotal) VALUES (3, 'OUTDOOR25', 25, 25000);
INSERT INTO coupons (id, code, percent_off, min_subtotal) VALUES (4, 'HELLO5', 5, 6000);
INSERT INTO checkout (id, coupon, customer_name, address, city, postcode) VALUES (1, '', '', '', '', '');
INSERT INTO orders (id, placed_on, customer_name, address, city, postcode, coupon, subtotal, discount, total, status, reviewed) VALUES (1, '2024-11-03', 'Rosa Garcia', '46 Kongensgade', 'Bilbao', '6544-936', '', 20500, 0, 20500, 'delivered', 1);
INSERT INTO orders (id, placed_on, customer_name, address, city, postcode, coupon, subtotal, discount, total, status, reviewed) VALUES (2, '2024-11-08', 'Rosa Garcia', '46 Kongensgade', 'Bilbao', '6544-936', '', 37448, 0, 37448, 'delivered', 1);
INSERT INTO order_items (id, order_id, product_id, qty, price) VALUES (1, 1, 5, 1, 20500);
INSERT INTO order_items (id, order_id, product_id, qty, price) VALUES (2, 2, 31, 1, 7100);
INSERT INTO order_items (id, order_id, product_id, qty, price) VALUES (3, 2, 34, 1, 18949);
INSERT INTO order_items (id, order_id, product_id, qty, price) VALUES (4, 2, 13, 1, 9200);
INSERT INTO order_items (id, order_id, product_id, qty, price) VALUES (5, 2, 16, 1, 2199);
INSERT INTO settings (id, name, value) VALUES (1, 'today', '2024-11-10');
