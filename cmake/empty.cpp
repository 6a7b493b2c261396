// Intentionally empty: placeholder source for a module folder with no .cpp yet.
