# The compression and checksum libraries the migration readers need (native builds only), all
# from Debian: libsnappy-dev, zlib1g-dev, libbz2-dev, liblz4-dev, libxxhash-dev (tools/setup.sh
# installs them). Sets SKV_MIGRATE_LIBS.
find_package(Snappy CONFIG REQUIRED)
find_package(ZLIB REQUIRED)
find_package(BZip2 REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(SKV_LZ4 REQUIRED IMPORTED_TARGET liblz4)
pkg_check_modules(SKV_XXHASH REQUIRED IMPORTED_TARGET libxxhash)
set(SKV_MIGRATE_LIBS Snappy::snappy ZLIB::ZLIB BZip2::BZip2 PkgConfig::SKV_LZ4
    PkgConfig::SKV_XXHASH)
