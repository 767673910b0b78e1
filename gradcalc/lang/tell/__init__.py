"""What the language tells a user: values printed (`render`), `:help`, `:vars`. (`explain` and `graph` move
here too.)"""
