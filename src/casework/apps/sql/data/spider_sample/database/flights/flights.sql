CREATE TABLE airlines (airline_id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT);
CREATE TABLE airports (code TEXT PRIMARY KEY, city TEXT NOT NULL, country TEXT);
CREATE TABLE flights (flight_no TEXT PRIMARY KEY, airline_id INTEGER REFERENCES airlines(airline_id), origin TEXT REFERENCES airports(code), destination TEXT REFERENCES airports(code), distance_km INTEGER);
INSERT INTO airlines VALUES (1,'Northwind Air','Norway'),(2,'Sol Airlines','Spain'),(3,'Maple Jet','Canada');
INSERT INTO airports VALUES ('OSL','Oslo','Norway'),('MAD','Madrid','Spain'),('YYZ','Toronto','Canada'),('BCN','Barcelona','Spain');
INSERT INTO flights VALUES ('NW1','1','OSL','MAD',2380),('NW2',1,'MAD','OSL',2380),('SO7',2,'MAD','BCN',483),('SO8',2,'BCN','MAD',483),('MJ3',3,'YYZ','OSL',5860),('MJ4',3,'YYZ','MAD',5980),('SO9',2,'BCN','OSL',2270);
