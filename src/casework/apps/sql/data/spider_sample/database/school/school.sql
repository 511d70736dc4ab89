CREATE TABLE students (student_id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER, major TEXT);
CREATE TABLE courses (course_id INTEGER PRIMARY KEY, title TEXT NOT NULL, credits INTEGER, department TEXT);
CREATE TABLE enrollments (student_id INTEGER REFERENCES students(student_id), course_id INTEGER REFERENCES courses(course_id), grade REAL);
INSERT INTO students VALUES (1,'Ana',20,'Physics'),(2,'Ben',22,'History'),(3,'Chloe',19,'Physics'),(4,'Dev',21,'Mathematics'),(5,'Eva',23,'History'),(6,'Farid',20,'Mathematics');
INSERT INTO courses VALUES (1,'Mechanics',4,'Physics'),(2,'Modern Europe',3,'History'),(3,'Linear Algebra',4,'Mathematics'),(4,'Optics',3,'Physics');
INSERT INTO enrollments VALUES (1,1,3.7),(1,3,3.3),(2,2,3.9),(3,1,2.8),(3,4,3.5),(4,3,4.0),(5,2,3.1),(6,3,3.6),(6,1,2.9);
