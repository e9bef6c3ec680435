// The fixture site for `rag build`'s tests: a small docs site with a blog, as a project
// would set one up (cli/tests/data/sites/regenerate.sh builds it).
export default {
  title: 'Tidepool',
  url: 'https://tidepool.example.org',
  baseUrl: '/',
  onBrokenLinks: 'throw',
  i18n: {defaultLocale: 'en', locales: ['en']},
  presets: [
    [
      'classic',
      {
        docs: {sidebarPath: './sidebars.js'},
        blog: {showReadingTime: true, onUntruncatedBlogPosts: 'ignore'},
      },
    ],
  ],
  themeConfig: {
    navbar: {
      title: 'Tidepool',
      items: [
        {type: 'docSidebar', sidebarId: 'guide', position: 'left', label: 'Guide'},
        {to: '/blog', label: 'Blog', position: 'left'},
      ],
    },
    footer: {copyright: 'Tidepool, a fixture for rag build.'},
  },
};
