from memgit.cli import main

main()
