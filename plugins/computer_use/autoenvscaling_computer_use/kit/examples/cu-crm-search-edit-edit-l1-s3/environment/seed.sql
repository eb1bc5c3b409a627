CREATE TABLE contacts (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  company TEXT NOT NULL DEFAULT '',
  email TEXT NOT NULL DEFAULT '',
  phone TEXT NOT NULL DEFAULT '',
  city TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT 'lead',
  notes TEXT NOT NULL DEFAULT ''
);

INSERT INTO contacts (id, name, company, email, phone, city, status, notes) VALUES (1, 'Zofia Moreau', 'Cedar & Pine', 'zofia.moreau@cedar.example', '+351 225 780 869', 'Porto', 'customer', '');
INSERT INTO contacts (id, name, company, email, phone, city, status, notes) VALUES (2, 'Nikolai Becker', 'Redwood Legal', 'nikolai.becker@redwood.example', '+351 250 613 766', 'Tampere', 'customer', '');
INSERT INTO contacts (id, name, company, email, phone, city, status, notes) VALUES (3, 'Hana Okafor', 'Juniper Health', 'hana.okafor@juniper.example', '+351 261 102 135', 'Leipzig', 'inactive', '');
INSERT INTO contacts (id, name, company, email, phone, city, status, notes) VALUES (4, 'Greta Sato', 'Pioneer Energy', 'greta.sato@pioneer.example', '+351 273 301 652', 'Porto', 'active', '');
INSERT INTO contacts (id, name, company, email, phone, city, status, notes) VALUES (5, 'Olga Moreau', 'Cedar & Pine', 'olga.moreau@cedar.example', '+351 240 138 354', 'Tampere', 'inactive', '');
INSERT INTO contacts (id, name, company, email, phone, city, status, notes) VALUES (6, 'Keiko Becker', 'Helios Analytics', 'keiko.becker@helios.example', '+351 218 928 482', 'Lyon', 'customer', '');
INSERT INTO contacts (id, name, company, email, phone, city, status, notes) VALUES (7, 'Julia Garcia', 'Cedar & Pine', 'julia.garcia@cedar.example', '+351 253 123 845', 'Graz', 'customer', '');
INSERT INTO contacts (id, name, company, email, phone, city, status, notes) VALUES (8, 'Quinn Zeller', 'Tidewater Marine', 'quinn.zeller@tidewater.example', '+351 273 255 786', 'Tampere', 'lead', '');
INSERT INTO contacts (id, name, company, email, phone, city, status, notes) VALUES (9, 'Olga Dubois', 'Summit Outdoor', 'olga.dubois@summit.example', '+351 298 459 101', 'Graz', 'active', '');
INSERT INTO contacts (id, name, company, email, phone, city, status, notes) VALUES (10, 'Daria Fischer', 'Bluefin Logistics', 'daria.fischer@bluefin.example', '+351 267 977 979', 'Madrid', 'lead', '');
INSERT INTO contacts (id, name, company, email, phone, city, status, notes) VALUES (11, 'Carlos Quintero', 'Helios Analytics', 'carlos.quintero@helios.example', '+351 274 993 761', 'Lisbon', 'lead', '');
INSERT INTO contacts (id, name, company, email, phone, city, status, notes) VALUES (12, 'Rosa Zeller', 'Pioneer Energy', 'rosa.zeller@pioneer.example', '+351 292 194 996', 'Tampere', 'active', '');
INSERT INTO contacts (id, name, company, email, phone, city, status, notes) VALUES (13, 'Keiko Yilmaz', 'Cedar & Pine', 'keiko.yilmaz@cedar.example', '+351 215 206 596', 'Leipzig', 'customer', '');
INSERT INTO contacts (id, name, company, email, phone, city, status, notes) VALUES (14, 'Carlos Lindqvist', 'Pioneer Energy', 'carlos.lindqvist@pioneer.example', '+351 299 483 889', 'Bilbao', 'customer', '');
INSERT INTO contacts (id, name, company, email, phone, city, status, notes) VALUES (15, 'Hana Horvat', 'Ironclad Tools', 'hana.horvat@ironclad.example', '+351 287 828 387', 'Krakow', 'customer', '');
