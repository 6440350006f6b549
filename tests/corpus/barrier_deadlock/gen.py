# no inputs needed
