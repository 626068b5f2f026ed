"""clparse command line (placeholder, filled in below)."""
import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="clparse")
def main() -> None:
    """clparse: constituent parsing by classification."""


if __name__ == "__main__":
    main()
